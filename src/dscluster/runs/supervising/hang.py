"""A collective hung with every rank alive: pure rules over the ranks' own progress (launcher/progress.py).

Every rank records the collective it is in (or was in last) and its node's watchdog adds how long its
process has done nothing (runs/supervising/rankprogress.py); the supervisor reads them from the heartbeats. What is
never a hang here: a slow healthy step (a rank computing, compiling, loading data or writing a checkpoint
uses CPU or does I/O, or waits on the disk), a long collective every rank is in (a big transfer), a run
whose ranks record nothing (no torch.distributed, `--env DSCLUSTER_PROGRESS=0`, NCCL's asynchronous
collectives: those end on the stall timeout as before).

Rules, in order of precedence (the supervisor asks after runs/detect.py's node rules found nothing):
1. Certain: two ranks wait in the same collective of the same group (its sequence number) and call it
   differently (`all_reduce` against `broadcast`): mismatched collectives never complete. Both waited
   MISMATCH_AFTER at least (never a moment's view of a rank between two calls).
2. Two that agree: the whole run has been quiet for QUIET_AFTER: every rank reported (fresh heartbeats),
   each either waits in a collective (in it for QUIET_AFTER at least), at least one of them in a collective
   of every rank, or did nothing at all (no CPU, no I/O, not running nor in a disk wait, its counter still)
   for QUIET_AFTER; and such an idle rank exists. Its peers wait for it and it does nothing: it sleeps or
   blocks outside torch.distributed. A rank that used point-to-point or asynchronous collectives is never
   called idle (it may be in the `wait()` of one, which is not recorded): the rule stays silent then.
Nothing here reads a file or waits: every rule is unit-tested with made-up states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dscluster.runs.supervising.verdict import Failure

KIND = "hung-collective"
MISMATCH_AFTER = 1.0
QUIET_AFTER = 2.0  # a loaded machine's healthy step never leaves a rank this long with no CPU and no I/O
FRESH = 1.0  # a rank's state counts when its node's heartbeat is at most this old


@dataclass(frozen=True)
class RankState:
    """One rank's progress as its node's watchdog last reported it."""

    rank: int
    node: str
    total: int  # collectives it entered so far
    seq: int  # of its current (or last) collective, within its group
    op: str
    group: str
    waiting: float | None  # seconds inside that collective; None: in none now
    idle: float  # seconds its processes did nothing
    world: bool = True  # the group holds every rank
    p2p: bool = False
    async_ops: bool = False
    age: float = 0.0  # seconds since the heartbeat that carried it

    @property
    def opaque(self) -> bool:
        """Whether a wait of this rank may be one the record cannot show (an async op's or a p2p's)."""
        return self.p2p or self.async_ops


def parse(word: str, node: str, age: float = 0.0) -> list[RankState]:
    """The ranks of one `prog=` heartbeat word (runs/supervising/rankprogress.py), without the `prog=`."""
    out = []
    for item in filter(None, word.split(",")):
        parts = item.split(":")
        if len(parts) < 8:
            continue
        try:
            rank, total, seq = int(parts[0]), int(parts[1]), int(parts[2])
            waiting = None if parts[3] == "-" else float(parts[3])
            idle = float(parts[4])
        except ValueError:
            continue
        flags = parts[5]
        out.append(RankState(rank, node, total, seq, parts[6], parts[7], waiting, idle, "w" in flags, "p" in flags,
                             "a" in flags, age))
    return out


def _mismatch(ranks: Sequence[RankState], after: float) -> Failure | None:
    slots: dict[tuple[str, int], RankState] = {}
    for r in sorted(ranks, key=lambda r: r.rank):
        if r.waiting is None or r.waiting < after:
            continue
        other = slots.setdefault((r.group, r.seq), r)
        if other.op != r.op:
            return Failure(KIND, f"rank {other.rank} waits in {other.op} and rank {r.rank} in {r.op}, the same "
                           f"collective (#{r.seq} of group {r.group}) called differently: they can never meet",
                           r.node, rank=r.rank)
    return None


def hung_collective(ranks: Sequence[RankState], world_size: int, *, mismatch_after: float = MISMATCH_AFTER,
                    quiet_after: float = QUIET_AFTER, fresh: float = FRESH) -> Failure | None:
    """The module's rules, in order; None when the ranks show no hang."""
    ranks = [r for r in ranks if r.age <= fresh]
    found = _mismatch(ranks, mismatch_after)
    if found is not None:
        return found
    by_rank = {r.rank: r for r in ranks}
    if world_size <= 1 or len(by_rank) < world_size:
        return None
    waiting = [r for r in by_rank.values() if r.waiting is not None]
    idle = [r for r in by_rank.values() if r.waiting is None]
    if not idle or not any(r.world for r in waiting):
        return None
    if any(r.waiting < quiet_after for r in waiting) or any(r.idle < quiet_after or r.opaque for r in idle):
        return None
    first = min(idle, key=lambda r: r.rank)
    longest = max(waiting, key=lambda r: r.waiting)
    names = ", ".join(str(r.rank) for r in sorted(idle, key=lambda r: r.rank))
    return Failure(KIND, f"rank {names} did nothing for {first.idle:.1f}s (no CPU, no I/O) outside any collective "
                   f"while rank {longest.rank} waited {longest.waiting:.1f}s in {longest.op} "
                   f"(#{longest.seq} of group {longest.group})", first.node, rank=first.rank)


def failure(chans, world_size: int) -> Failure | None:
    """The rules over what every node's watchdog channel (runs/channel.py) last reported."""
    ranks = [r for ch in chans for r in parse(ch.prog, ch.node, ch.prog_age())]
    return hung_collective(ranks, world_size) if ranks else None

"""GPU leases, the pure rules: which GPUs a run uses, which claims are stale, which GPUs collide, and who goes
next in the queue. No file is read or written here (runs/leases/files.py keeps the claims on shared storage,
runs/leases/leasing.py takes and releases them for a run).

A run's claim is one `Claim`: the (node, GPU index) pairs it uses, who owns it, the supervisor that holds it
(host, pid and the process's start time, so a reused pid is not taken for it), when it asked (`queued`: the
queue's order), since when it holds the GPUs (`since`; None while it waits), until when (`until`: the run's
time limit, None: until it ends) and its supervisor's last heartbeat. A claim is `held` (the GPUs are the
run's) or `waiting` (a `--wait` launch in the queue).

A claim is stale, and its GPUs free, when its supervisor is known to be gone (its pid dead, or another
process, on the host it was recorded on) or its heartbeat is older than HEARTBEAT_TIMEOUT (a supervisor on
another host, or a machine that went away).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

HELD, WAITING = "held", "waiting"
HEARTBEAT_EVERY = 10.0  # seconds between a supervisor's heartbeats
HEARTBEAT_TIMEOUT = 120.0  # a claim whose heartbeat is older than this is stale (its GPUs are free)


@dataclass(frozen=True, order=True)
class Gpu:
    """One GPU: its node (the hostfile's name; this machine's hostname for a local run) and its index."""

    node: str
    index: int

    def __str__(self) -> str:
        return f"{self.node}:{self.index}"


@dataclass(frozen=True)
class Holder:
    """The process that holds a claim: its host, pid and start time (/proc's, in clock ticks; None: unknown)."""

    host: str
    pid: int
    started: str | None = None


@dataclass(frozen=True)
class Claim:
    run_id: str
    owner: str
    gpus: tuple[Gpu, ...]
    holder: Holder
    state: str = HELD
    queued: float = 0.0  # when the run asked for its GPUs (the queue's order)
    since: float | None = None  # when it took them (None: waiting)
    until: float | None = None  # its time limit (None: until it ends)
    heartbeat: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "owner": self.owner, "gpus": [[g.node, g.index] for g in self.gpus],
                "holder": {"host": self.holder.host, "pid": self.holder.pid, "started": self.holder.started},
                "state": self.state, "queued": self.queued, "since": self.since, "until": self.until,
                "heartbeat": self.heartbeat}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Claim:
        """A claim as written by to_json; a ValueError/KeyError/TypeError for anything else (ignored by readers)."""
        h = data["holder"]
        state = str(data.get("state") or HELD)
        if state not in (HELD, WAITING):
            raise ValueError(f"unknown claim state {state!r}")
        return cls(run_id=str(data["run_id"]), owner=str(data["owner"]),
                   gpus=tuple(Gpu(str(n), int(i)) for n, i in data["gpus"]),
                   holder=Holder(str(h["host"]), int(h["pid"]), None if h.get("started") is None else str(h["started"])),
                   state=state, queued=float(data.get("queued") or 0.0),
                   since=None if data.get("since") is None else float(data["since"]),
                   until=None if data.get("until") is None else float(data["until"]),
                   heartbeat=float(data.get("heartbeat") or 0.0))


def gpus_of(hosts: Iterable[tuple[str, int]], include: str | None, *, here: str, local_procs: int = 1) -> tuple[Gpu, ...]:
    """The GPUs a run uses: each host's slots 0..n-1, or the devices the runner's --include names
    ("node1:0,1@node2:2"); no hosts: this machine (`here`), its first `local_procs` devices or --include
    localhost:..."""
    picked: dict[str, tuple[int, ...] | None] = {}
    for part in (include or "").split("@"):
        if part.strip():
            name, _, slots = part.strip().partition(":")
            picked[name] = tuple(int(s) for s in slots.split(",") if s.strip()) if slots else None
    hosts = list(hosts)
    if not hosts:
        local = [s for n, v in picked.items() if n in ("localhost", "127.0.0.1") for s in v or ()]
        return tuple(Gpu(here, i) for i in sorted(set(local) or range(int(local_procs or 1))))
    out = []
    for host, slots in hosts:
        devices = picked.get(host) if host in picked and picked.get(host) is not None else tuple(range(int(slots)))
        out += [Gpu(host, int(i)) for i in devices]
    return tuple(sorted(set(out)))


def overlap(a: Iterable[Gpu], b: Iterable[Gpu]) -> tuple[Gpu, ...]:
    return tuple(sorted(set(a) & set(b)))


def is_stale(claim: Claim, now: float, alive: Callable[[Holder], bool | None],
             timeout: float = HEARTBEAT_TIMEOUT) -> bool:
    """Whether the claim's supervisor is gone: `alive(holder)` False (checked on its own host), or no
    heartbeat for `timeout` seconds (None from `alive`: another host, only the heartbeat tells)."""
    if alive(claim.holder) is False:
        return True
    return now - claim.heartbeat > timeout


def live(claims: Iterable[Claim], now: float, alive: Callable[[Holder], bool | None],
         timeout: float = HEARTBEAT_TIMEOUT) -> tuple[Claim, ...]:
    """The claims that still count (stale ones reclaimed: their GPUs are free)."""
    return tuple(c for c in claims if not is_stale(c, now, alive, timeout))


def queue(claims: Iterable[Claim]) -> tuple[Claim, ...]:
    """The waiting claims in FIFO order: who asked first (then the run id, for a stable order)."""
    return tuple(sorted((c for c in claims if c.state == WAITING), key=lambda c: (c.queued, c.run_id)))


def blockers(claims: Iterable[Claim], run_id: str, gpus: Iterable[Gpu], queued: float | None = None) -> tuple[Claim, ...]:
    """The live claims in the way of run `run_id` taking `gpus`: held claims on any of them, and waiting
    claims on any of them that asked earlier (queued before `queued`; None: any waiting claim, since a
    launch that does not wait must not jump the queue)."""
    gpus = tuple(gpus)
    out = []
    for c in claims:
        if c.run_id == run_id or not overlap(c.gpus, gpus):
            continue
        if c.state == HELD or queued is None or (c.queued, c.run_id) < (queued, run_id):
            out.append(c)
    return tuple(out)


def take(claim: Claim, now: float, holder: Holder) -> Claim:
    """The claim held from now on by `holder` (its queue time kept)."""
    return replace(claim, state=HELD, since=claim.since if claim.state == HELD and claim.since else now,
                   holder=holder, heartbeat=now)


def beat(claim: Claim, now: float) -> Claim:
    return replace(claim, heartbeat=now)

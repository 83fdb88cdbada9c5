"""The node side of the ranks' progress (launcher/progress.py): what each rank of this node is doing, as its
watchdog (runs/watchdog.py) sends it with every heartbeat.

For each rank record of the attempt in /dev/shm: its progress counter, the collective it is in (or was in
last) and for how long, and how long its process has been idle: no CPU beyond IDLE_TICKS a second (its
threads and its children, a data loader's workers, together), no bytes read or written, not running or in
a disk wait (state R or D) when sampled, not blocked on a socket, a pipe or a poll, and its main thread not
woken (its voluntary context switches unchanged: a loop that polls for a file with `time.sleep(1)` wakes
every second, though its CPU is too little to see). A rank writing a checkpoint, compiling, loading data,
downloading, polling, or starved of CPU on a busy machine is never idle; one asleep in one long sleep, or
blocked on a lock, is. Stdlib only.

Sent as `prog=RANK:TOTAL:SEQ:WAIT:IDLE:FLAGS:OP:GROUP,...` (WAIT `-` when in no collective; FLAGS: `w` the
group holds every rank, `p` the rank used point-to-point ops, `a` it issued async collectives).
"""

from __future__ import annotations

import os
import re
import time

from dscluster.launcher import progress

IDLE_TICKS = 2  # clock ticks (1/100 s) of CPU a second that still count as idle: a sleeping process's timers
WINDOW = 1.0  # seconds over which CPU and I/O are compared
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
IO_WAITS = ("poll", "select", "sk_wait", "wait_woken", "inet_csk_accept", "tcp", "unix_stream", "sock", "pipe",
            "nfs", "rpc")


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, utime + stime in ticks) of a process (all its threads)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def _io(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/io") as f:
            return sum(int(line.split()[1]) for line in f if line.startswith(("rchar", "wchar")))
    except (OSError, IndexError, ValueError):
        return 0


def _wakes(pid: int) -> int:
    """The main thread's voluntary context switches: each time it blocked, i.e. woke from a wait before."""
    try:
        with open(f"/proc/{pid}/task/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches")), 0)
    except (OSError, IndexError, ValueError):
        return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return []


def waits_outside(pid: int) -> bool:
    """Whether the process's main thread is blocked on a socket, a pipe or a poll (its kernel wait channel): a
    download, a server's answer, a child's output. Such a wait may end from outside the run, so it is never idle;
    a sleep (hrtimer_nanosleep) or a lock (futex) is. Unknown (no wait channel shown): not."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            chan = f.read().strip()
    except OSError:
        return False
    return any(word in chan for word in IO_WAITS)


def sample(pid: int) -> tuple[bool, int, int, int] | None:
    """(running, in a disk wait or waiting outside now; CPU ticks; I/O bytes) of a process and its children,
    and its main thread's wake-ups; None when gone."""
    head = _stat(pid)
    if head is None:
        return None
    busy, ticks, io = head[0] in ("R", "D") or waits_outside(pid), head[1], _io(pid)
    for child in _children(pid):
        got = _stat(child)
        if got is not None:
            busy, ticks, io = busy or got[0] in ("R", "D"), ticks + got[1], io + _io(child)
    return busy, ticks, io, _wakes(pid)


class Activity:
    """How long each watched process has been idle, from samples taken at every heartbeat."""

    def __init__(self) -> None:
        self.samples: dict[int, list[tuple[float, int, int]]] = {}
        self.active_at: dict[int, float] = {}
        self.totals: dict[int, int] = {}
        self.wakes: dict[int, int] = {}

    def idle_for(self, pid: int, total: int, now: float) -> float:
        got = sample(pid)
        if got is None:
            return 0.0
        busy, ticks, io, wakes = got
        woke = self.wakes.get(pid, wakes) != wakes
        self.wakes[pid] = wakes
        hist = self.samples.setdefault(pid, [])
        hist.append((now, ticks, io))
        while len(hist) > 2 and hist[1][0] <= now - WINDOW:
            hist.pop(0)
        first = hist[0]
        moved = self.totals.get(pid) != total
        self.totals[pid] = total
        if pid not in self.active_at or busy or moved or woke or ticks - first[1] > IDLE_TICKS or io != first[2]:
            self.active_at[pid] = now
        return now - self.active_at[pid]


def _rank_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    return next((e[5:].decode() for e in env if e.startswith(b"RANK=")), None)


def report(run_id: str, attempt: int | None, pids: list[int], activity: Activity, shm: str = progress.SHM_DIR) -> str:
    """The `prog=` word of a heartbeat: the record of every rank of the attempt that runs here, among the run's
    processes `pids` ("" when none). /dev/shm may be shared with other nodes (simulated ones): a record counts
    only when its process is one of these and carries its rank."""
    if attempt is None or not pids:
        return ""
    prefix, now, out, here = os.path.basename(progress.record_path(run_id, attempt, "")), time.monotonic(), [], set(pids)
    try:
        names = [n for n in os.listdir(shm) if n.startswith(prefix)]
    except OSError:
        return ""
    for name in sorted(names):
        rank = name[len(prefix):].rsplit(".", 1)[-1]
        rec = progress.read_record(os.path.join(shm, name))
        if rec is None or rec.pid not in here or _rank_of(rec.pid) != rank:
            continue
        wait = f"{max(0.0, now - rec.since):.2f}" if rec.inside else "-"
        flags = "w" * rec.world + "p" * rec.p2p + "a" * rec.async_ops
        out.append(f"{rank}:{rec.total}:{rec.seq}:{wait}:{activity.idle_for(rec.pid, rec.total, now):.2f}:"
                   f"{flags}:{_SAFE.sub('_', rec.op)}:{_SAFE.sub('_', rec.group)}")
    return "prog=" + ",".join(out) if out else ""


def remove_records(run_id: str, attempt: int | None, shm: str = progress.SHM_DIR) -> int:
    """Unlink the attempt's rank records on this node (and earlier attempts' ones when attempt is None)."""
    prefix, removed = f"{progress.PREFIX}.{os.getuid()}.{run_id}.", 0
    try:
        names = os.listdir(shm)
    except OSError:
        return 0
    for name in names:
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest is None or (attempt is not None and not rest.split(".")[0].isdigit()):
            continue
        if attempt is None or int(rest.split(".")[0]) <= attempt:
            try:
                os.unlink(os.path.join(shm, name))
                removed += 1
            except OSError:
                pass
    return removed

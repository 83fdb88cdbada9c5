"""Each rank's own progress through its collectives, where its node's watchdog can read it.

Why: a rank that never enters the collective its peers wait in (it sleeps or blocks in Python, or calls
another collective) hangs the run with every process alive: no heartbeat stops, no rank exits, and only
the stall timeout ended it. What tells it from a slow healthy step is what each rank is doing: its peers
have waited in collective #k for seconds while it is in none and does nothing (runs/supervising/hang.py).

How: while restarts or supervision want it (the plan sets DSCLUSTER_PROGRESS=1 and puts
launcher/rankhook on every rank's PYTHONPATH: its `sitecustomize` calls `install()`; `--env
DSCLUSTER_PROGRESS=0` opts out), a rank process (RANK in its environment) wraps torch.distributed's
collective functions as torch imports them. Each outermost call records, in a 64-byte shared-memory
record /dev/shm/dscluster-progress.<uid>.<run>.<attempt>.<rank> created at its first collective:
  total   collectives entered so far (every group), the progress counter
  seq     how many collectives of this call's group this rank entered (this one included)
  op      the function's name (aliases folded: `_all_gather_base` is `all_gather_into_tensor`)
  group   the process group's name; `world`: the group holds every rank (they must all enter it)
  inside  1 while the call runs (a synchronous collective waits here for its peers), 0 after it
  since   time.monotonic() of that entry or exit (the node's clock: the watchdog reads it there)
  flags   p2p: the rank used point-to-point ops; async: it issued a collective with async_op=True (its
          later `wait()` is invisible here: the rule never calls such a rank idle)
  pid     the rank's process (the watchdog measures its CPU and I/O)
The cost is a struct packed into a mmap per call entry and exit (about a microsecond). Stdlib only; torch
is never imported from here.
"""

from __future__ import annotations

import atexit
import functools
import mmap
import os
import struct
import sys
import threading
import time
from dataclasses import dataclass

ENV = "DSCLUSTER_PROGRESS"  # "1": the ranks record their progress; "0": they do not (opt-out)
SHM_DIR = "/dev/shm"
PREFIX = "dscluster-progress"
_LAYOUT = struct.Struct("<4sHHIQQd24s24s")  # magic, flags, inside, pid, total, seq, since, op, group
SIZE = 128
MAGIC = b"DSCP"
WORLD, P2P, ASYNC = 1, 2, 4

COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base", "all_gather_object",
               "all_reduce_coalesced", "all_to_all", "all_to_all_single", "barrier", "monitored_barrier",
               "broadcast", "broadcast_object_list", "gather", "gather_object", "reduce", "reduce_scatter",
               "reduce_scatter_tensor", "_reduce_scatter_base", "scatter", "scatter_object_list")
P2P_OPS = ("send", "recv", "isend", "irecv", "batch_isend_irecv", "send_object_list", "recv_object_list")
ALIASES = {"_all_gather_base": "all_gather_into_tensor", "_reduce_scatter_base": "reduce_scatter_tensor"}
C10D = "torch.distributed.distributed_c10d"


def record_path(run_id: str, attempt: str | int, rank: str | int, uid: int | None = None, shm: str = SHM_DIR) -> str:
    uid = os.getuid() if uid is None else uid
    return os.path.join(shm, f"{PREFIX}.{uid}.{run_id}.{attempt}.{rank}")


@dataclass(frozen=True)
class Record:
    """One rank's progress record as read back."""

    pid: int
    total: int
    seq: int
    op: str
    group: str
    world: bool
    inside: bool
    since: float
    p2p: bool
    async_ops: bool


def read_record(path: str) -> Record | None:
    """A rank's record, or None when absent or not one (read twice until two reads agree: never torn)."""
    try:
        with open(path, "rb") as f:
            data = f.read(_LAYOUT.size)
            for _ in range(3):
                f.seek(0)
                again = f.read(_LAYOUT.size)
                if again == data:
                    break
                data = again
    except OSError:
        return None
    if len(data) < _LAYOUT.size or data[:4] != MAGIC:
        return None
    _m, flags, inside, pid, total, seq, since, op, group = _LAYOUT.unpack(data)
    return Record(pid, total, seq, op.rstrip(b"\0").decode(errors="replace"),
                  group.rstrip(b"\0").decode(errors="replace"), bool(flags & WORLD), bool(inside), since,
                  bool(flags & P2P), bool(flags & ASYNC))


def _unlink(path: str, pid: int) -> None:
    """At the rank's exit: its record goes (its node's watchdog removes those of ranks that were killed)."""
    if os.getpid() == pid:
        try:
            os.unlink(path)
        except OSError:
            pass


class _Recorder:
    """The rank's side: one mmap'd record, written at every outermost collective entry and exit."""

    def __init__(self, path: str):
        self.path = path
        self.map: mmap.mmap | None = None
        self.total = 0
        self.seqs: dict[str, int] = {}
        self.flags = 0
        self.groups: dict[int, tuple[object, str, bool]] = {}  # id(group) -> (group, name, holds every rank)
        self.local = threading.local()
        self.failed = False
        self.last: tuple[bool, str, str, int] = (False, "", "", 0)

    def _open(self) -> bool:
        if self.map is None and not self.failed:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
                try:
                    os.ftruncate(fd, SIZE)
                    self.map = mmap.mmap(fd, SIZE)
                finally:
                    os.close(fd)
                atexit.register(_unlink, self.path, os.getpid())
            except (OSError, ValueError):
                self.failed = True  # no /dev/shm: the rank runs on unrecorded
        return self.map is not None

    def _group(self, dist, group) -> tuple[str, bool]:
        known = self.groups.get(id(group))
        if known is not None and known[0] is group:
            return known[1], known[2]
        try:
            pg = group if group is not None else dist.distributed_c10d._get_default_group()
            name = str(getattr(pg, "group_name", "") or "world")
            world = group is None or dist.get_world_size(group) == dist.get_world_size()
        except Exception:  # noqa: BLE001 - an unknown group: never a world one
            name, world = "?", False
        self.groups[id(group)] = (group, name, world)
        return name, world

    def write(self, inside: bool, op: str, group: str, seq: int) -> None:
        self.last = (inside, op, group, seq)
        if self._open():
            data = _LAYOUT.pack(MAGIC, self.flags, int(inside), os.getpid(), self.total, seq, time.monotonic(),
                                op.encode()[:24], group.encode()[:24])
            self.map[:_LAYOUT.size] = data

    def call(self, dist, fn, op: str, where: tuple[int, int], args, kwargs):
        gidx, aidx = where
        if getattr(self.local, "depth", 0):  # a collective built from another (all_gather_object...)
            return fn(*args, **kwargs)
        if op in P2P_OPS:  # not counted (pipeline stages send different numbers), but marked
            if not self.flags & P2P:
                self.flags |= P2P
                self.write(*self.last)
            return fn(*args, **kwargs)
        if kwargs.get("async_op", args[aidx] if 0 <= aidx < len(args) else False):
            self.flags |= ASYNC
        group = kwargs.get("group", args[gidx] if 0 <= gidx < len(args) else None)
        name, world = self._group(dist, group)
        self.flags = (self.flags | WORLD) if world else (self.flags & ~WORLD)
        self.total += 1
        seq = self.seqs[name] = self.seqs.get(name, 0) + 1
        self.local.depth = 1
        self.write(True, op, name, seq)
        try:
            return fn(*args, **kwargs)
        finally:
            self.local.depth = 0
            self.write(False, op, name, seq)


def _wrap(recorder: _Recorder, dist, fn, name: str):
    import inspect  # noqa: PLC0415 - only once torch.distributed is imported (torch has imported it)

    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    where = tuple(params.index(p) if p in params else -1 for p in ("group", "async_op"))
    op = ALIASES.get(name, name)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return recorder.call(dist, fn, op, where, args, kwargs)

    wrapper.__dscluster_progress__ = True
    return wrapper


def patch(module, recorder: _Recorder, dist=None) -> int:
    """Wrap the collective and point-to-point functions of torch.distributed.distributed_c10d (`module`);
    how many were wrapped."""
    dist = dist or sys.modules.get("torch.distributed") or module
    n = 0
    for name in (*COLLECTIVES, *P2P_OPS):
        fn = getattr(module, name, None)
        if callable(fn) and not getattr(fn, "__dscluster_progress__", False):
            setattr(module, name, _wrap(recorder, dist, fn, name))
            n += 1
    return n


class _Finder:
    """Wraps torch.distributed.distributed_c10d as it is imported: before torch.distributed's __init__ copies
    its names (`from .distributed_c10d import *`), so `torch.distributed.all_reduce` is the wrapped one."""

    def __init__(self, recorder: _Recorder):
        self.recorder = recorder

    def find_spec(self, name, path=None, target=None):
        if name != C10D:
            return None
        from importlib.machinery import PathFinder  # noqa: PLC0415

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader, recorder = spec.loader, self.recorder
        run = loader.exec_module

        def exec_module(module):
            run(module)
            try:
                patch(module, recorder, sys.modules.get("torch.distributed"))
            except Exception:  # noqa: BLE001 - never break the user's torch
                pass

        loader.exec_module = exec_module
        return spec


def install(environ=os.environ) -> bool:
    """In a rank process of a dscluster run (RANK, DSCLUSTER_RUN_ID, DSCLUSTER_PROGRESS=1): record its
    collectives from the moment torch.distributed is imported. False when not (nothing changed)."""
    run_id, attempt, rank = environ.get("DSCLUSTER_RUN_ID"), environ.get("DSCLUSTER_ATTEMPT", "0"), environ.get("RANK")
    if environ.get(ENV) != "1" or not run_id or not (rank or "").isdigit() or "/" in run_id:
        return False
    recorder = _Recorder(record_path(run_id, attempt, rank))
    if C10D in sys.modules:
        patch(sys.modules[C10D], recorder)
    else:
        sys.meta_path.insert(0, _Finder(recorder))
    return True

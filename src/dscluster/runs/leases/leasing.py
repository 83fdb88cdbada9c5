"""A run's GPU leases: taken (or queued) when it is launched, held by its supervisor with a heartbeat, released
when it ends however it ends. The rules are runs/leases/rules.py's, the files runs/leases/files.py's.

- `claim_at_launch` (runs.service.start, before anything starts): under the lock, a launch whose GPUs a live
  run holds (or an earlier queued run wants) is refused with who holds what since when (GpusBusy), or with
  `wait` written as a waiting claim (the run's status is then "queued").
- `SupervisorLeases` (the supervisor): takes the GPUs, waiting its turn in FIFO order while queued (a stop
  ends the wait), refreshes the heartbeat every HEARTBEAT_EVERY seconds, and releases them at the end.
- A scheduler that allocates the nodes itself (its backend `allocates`) shares its GPUs itself: no leases.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from dscluster.errors import GpusBusy
from dscluster.i18n import tr
from dscluster.runs.leases import files as leasefiles
from dscluster.runs.leases.files import LeaseBoard, holder_alive, this_holder
from dscluster.runs.leases.rules import (
    HEARTBEAT_EVERY,
    HELD,
    WAITING,
    Claim,
    Gpu,
    Holder,
    beat,
    blockers,
    gpus_of,
    live,
    take,
)
from dscluster.runs.records.record import RunRecord

QUEUED = "queued"  # the run's status while it waits in the GPU queue


def has_local_gpus() -> bool:
    """Whether this machine has GPUs to share (NVIDIA device files): a local run on CPU processes takes none."""
    import glob

    return bool(glob.glob("/dev/nvidia[0-9]*"))


def leases_dir(record: RunRecord, shared: Path) -> Path | None:
    """Where the run's claim lives; None for a run that takes no leases: its scheduler shares the GPUs (a
    backend that `allocates`: a scheduler), it was launched with --share-gpus, or it runs on this machine and this
    machine has no GPU."""
    backend = record.launch.backend
    if backend.allocates or record.launch.share_gpus:
        return None
    if backend.on_this_machine:
        return leasefiles.local_dir() if has_local_gpus() else None
    return leasefiles.cluster_dir(shared)


def run_gpus(record: RunRecord) -> tuple[Gpu, ...]:
    c = record.launch
    return gpus_of(c.hosts, c.include, here=socket.gethostname(), local_procs=c.local_procs)


def shown_time(when: float | None) -> str:
    if when is None:
        return tr("until it ends")
    return _dt.datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


def describe(claim: Claim, gpus: tuple[Gpu, ...] | None = None) -> str:
    """"run R (owner O) holds node0:0, node0:1 since T until U" (or "waits for ... since T")."""
    shown = ", ".join(str(g) for g in (gpus or claim.gpus))
    if claim.state == WAITING:
        return tr("run {run} ({owner}) is queued for {gpus} since {since}", run=claim.run_id, owner=claim.owner,
                  gpus=shown, since=shown_time(claim.queued))
    return tr("run {run} ({owner}) holds {gpus} since {since}, until {until}", run=claim.run_id, owner=claim.owner,
              gpus=shown, since=shown_time(claim.since), until=shown_time(claim.until) if claim.until else
              tr("it ends"))


def busy_error(record: RunRecord, in_way: tuple[Claim, ...], gpus: tuple[Gpu, ...]) -> GpusBusy:
    from dscluster.runs.leases.rules import overlap

    lines = "; ".join(describe(c, overlap(c.gpus, gpus)) for c in in_way)
    return GpusBusy(tr("the GPUs of this launch are taken: {lines}", lines=lines),
                    tr("add --wait to queue the run until they are free (dscluster queue shows the queue), or run on "
                       "other GPUs (--include NODE:GPUS, --exclude, --hostfile)"), setting="--wait")


def claim_at_launch(record: RunRecord, shared: Path, *, wait: bool) -> Claim | None:
    """Take the run's GPUs before its supervisor starts (it takes the claim over), or queue it (`wait`);
    refused with GpusBusy when they are taken and it does not wait. None: the run takes no leases."""
    directory = leases_dir(record, shared)
    gpus = run_gpus(record)
    if directory is None or not gpus:
        return None
    with LeaseBoard(directory) as board:
        now = time.time()
        in_way = blockers(live(board.claims(), now, holder_alive), record.id, gpus)
        if in_way and not wait:
            raise busy_error(record, in_way, gpus)
        # Held for the supervisor that is about to start (it takes the claim over within seconds): judged by its
        # heartbeat alone until then, not by this launching process, which may exit first.
        launching = Holder(f"{socket.gethostname()} (launching)", os.getpid(), None)
        claim = Claim(record.id, str(record.owner or ""), gpus, launching, state=WAITING if in_way else HELD,
                      queued=now, since=None if in_way else now, heartbeat=now)
        board.write(claim)
    return claim


def release_at(directory: Path | None, run_id: str) -> None:
    """Remove a run's claim (a launch that failed to start its supervisor, a forced stop)."""
    if directory is None:
        return
    with contextlib.suppress(Exception), LeaseBoard(directory) as board:
        board.remove(run_id)


def release(record: RunRecord, shared: Path) -> None:
    release_at(leases_dir(record, shared), record.id)


@dataclass
class SupervisorLeases:
    """The supervisor's side: `acquire` (waits in the queue), a heartbeat thread, `release`."""

    record: RunRecord
    shared: Path
    event: Callable[..., None] = lambda *a, **k: None

    def __post_init__(self) -> None:
        self.directory = leases_dir(self.record, self.shared)
        self.gpus = run_gpus(self.record)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self, stop_wanted: Callable[[], bool], save: Callable[..., None], poll: float = 1.0) -> bool:
        """Take the run's GPUs, waiting while earlier or live claims are in the way (a queued run's status
        becomes "pending" through `save` once they are its); False when a stop came first (the claim is
        released by `release`)."""
        if self.directory is None or not self.gpus:
            if self.record.status == QUEUED:
                save(status="pending")
            return True
        said = None
        while True:
            claim, in_way = self._try_take()
            if not in_way:
                self.event("gpus-held", gpus=[str(g) for g in claim.gpus])
                if said is not None or self.record.status == QUEUED:
                    save(status="pending")
                break
            names = sorted(c.run_id for c in in_way)
            if names != said:
                self.event("queued", gpus=[str(g) for g in self.gpus], behind=names)
                said = names
            if stop_wanted():
                return False
            time.sleep(poll)
        self._thread = threading.Thread(target=self._beat, name="gpu-leases", daemon=True)
        self._thread.start()
        return True

    def _try_take(self) -> tuple[Claim, tuple[Claim, ...]]:
        me = this_holder()
        with LeaseBoard(self.directory) as board:
            now = time.time()
            claims = board.claims()
            mine = next((c for c in claims if c.run_id == self.record.id), None) or \
                Claim(self.record.id, str(self.record.owner or ""), self.gpus, me, state=WAITING, queued=now)
            in_way = blockers(live(claims, now, holder_alive), self.record.id, self.gpus, mine.queued)
            claim = replace(mine, holder=me, heartbeat=now) if in_way else take(mine, now, me)
            if claim.state == HELD or claim.holder != mine.holder or now - mine.heartbeat > HEARTBEAT_EVERY:
                board.write(claim)
            return claim, in_way

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_EVERY):
            with contextlib.suppress(Exception), LeaseBoard(self.directory) as board:
                mine = board.get(self.record.id)
                if mine is not None:
                    board.write(beat(mine, time.time()))

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        release_at(self.directory, self.record.id)


# ---- what `dscluster queue`, the API and the panel show ---------------------------------------------
@dataclass(frozen=True)
class Waiting:
    """A queued run: its place in the queue (1: next), its claim, and the live claims in its way."""

    position: int
    claim: Claim
    behind: tuple[Claim, ...]


@dataclass(frozen=True)
class Board:
    """The live claims of some leases directories: the GPUs held, and the queue in FIFO order."""

    held: tuple[Claim, ...]
    queue: tuple[Waiting, ...]

    def holding(self, run_id: str) -> tuple[Gpu, ...]:
        return next((c.gpus for c in self.held if c.run_id == run_id), ())

    def to_json(self) -> dict:
        return {"held": [c.to_json() for c in self.held],
                "queue": [{"position": w.position, **w.claim.to_json(), "behind": [c.run_id for c in w.behind]}
                          for w in self.queue]}


def places(shared_dirs: list[Path]) -> list[Path]:
    """The leases directories of these places runs live in (their clusters'), and this machine's own."""
    found = [leasefiles.cluster_dir(s) for s in shared_dirs] + [leasefiles.local_dir()]
    return [d for i, d in enumerate(found) if d.is_dir() and d not in found[:i]]


def board(directories: list[Path]) -> Board:
    from dscluster.runs.leases.rules import queue

    now = time.time()
    claims = live([c for d in directories for c in leasefiles.read_claims(d)], now, holder_alive)
    waiting = tuple(Waiting(i + 1, c, blockers(claims, c.run_id, c.gpus, c.queued))
                    for i, c in enumerate(queue(claims)))
    held = tuple(sorted((c for c in claims if c.state == HELD), key=lambda c: (c.since or 0.0, c.run_id)))
    return Board(held, waiting)


def queue_line(run_id: str, shared_dirs: list[Path]) -> str:
    """`status` of a queued run: its place in the queue and who holds the GPUs it waits for."""
    shown = board(places(shared_dirs))
    waiting = next((w for w in shown.queue if w.claim.run_id == run_id), None)
    if waiting is None:
        return tr("queued for its GPUs")
    return tr("queued for its GPUs, number {n} in the queue; in its way: {lines}", n=waiting.position,
              lines="; ".join(describe(c) for c in waiting.behind) or "-")

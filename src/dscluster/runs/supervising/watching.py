"""The supervisor's watching part: one attempt's nodes, runner and logs, seen as `Observation`s.

An `AttemptWatch` owns what an attempt is watched through: a watchdog channel per node (channel.py:
heartbeats every 0.25 s, pings from a thread of their own, the node's sshd probed once the heartbeats
pause; the ranks' progress through their collectives), DeepSpeed's runner process, the launcher log read from where the attempt began, the count of
ranks launch.py saw exit cleanly, and the progress mark whose change tells a stall from a run that works.
Each `observe()` hands out what it saw as one typed `Observation`; judging it is judging.py's part
(`Judge.verdict`). At the attempt's end it tears the attempt down everywhere (`teardown`) and closes its
channels. It writes nothing of the run's: what it found is returned, and the supervisor records it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dscluster import fsutil
from dscluster.cluster.runner import LocalRunner, run_parallel
from dscluster.logtext import LINE_LIMIT
from dscluster.runs.supervising import detect, hang
from dscluster.runs.supervising.channel import NodeChannel, Pinger, close_all
from dscluster.runs.supervising.reaper import reap

if TYPE_CHECKING:
    from dscluster import explain as explainer
    from dscluster.runs.records.record import LaunchSpec

READ_CHUNK = 1 << 20  # the most of the launcher log the supervisor reads in one tick


def read_new(log_path: Path, offset: int) -> tuple[str, int]:
    """The launcher log's new whole lines from `offset`, at most READ_CHUNK bytes a tick. A line that does not
    end within LINE_LIMIT bytes (a program printing without newlines, or on purpose) is read past as it comes,
    never read again from its start on every tick (which would grow with the square of its length)."""
    try:
        data = fsutil.read_bytes(log_path, offset, READ_CHUNK)
    except OSError:
        return "", offset
    end = data.rfind(b"\n") + 1
    if end == 0 and len(data) > LINE_LIMIT:
        end = len(data)
    return data[:end].decode("utf-8", "replace"), offset + end


def log_sizes(run_dir: Path, log_path: Path) -> dict[Path, int]:
    """Where the launcher log and every rank's log stand now."""
    sizes = {}
    for p in [log_path, *(Path(run_dir) / "logs").glob("*_rank*.log")]:
        try:
            sizes[p] = p.stat().st_size
        except OSError:
            pass
    return sizes


# A JIT build counts as progress this long at most: CUDA ops for several architectures take 10-20 minutes; a
# compiler stuck longer (a hung nvcc, a build directory on a frozen mount) is a stall like any other.
BUILD_MAX_S = 1800.0


def progress_mark(run_dir: Path) -> tuple:
    """The sizes of metrics.jsonl and every log: a change is progress."""
    sizes = []
    for p in [Path(run_dir) / "metrics.jsonl", *sorted((Path(run_dir) / "logs").glob("*.log"))]:
        try:
            sizes.append(p.stat().st_size)
        except OSError:
            pass
    return tuple(sizes)


@dataclass(frozen=True)
class Observation:
    """What one look at a running attempt saw (judging.py's `Judge.verdict` reads it)."""

    now: float  # time.monotonic() of the look
    rc: int | None  # the runner's exit code; None while it runs
    text: str  # the launcher log's new whole lines since the last look
    ranks_ok: int  # launch.py's "Process N exits successfully" lines of this attempt so far
    world: int  # the attempt's ranks
    nodes: tuple[detect.NodeView, ...]  # every node's watchdog channel, as detect.py reads it
    idle: float  # seconds since the logs or metrics last grew (0.0 when no stall timeout is set)
    lost: explainer.Explanation | None = None  # the backend's hook: the attempt cannot go on (a scheduler's job ended)
    ranks: tuple[hang.RankState, ...] = ()  # every rank's progress through its collectives (hang.py), as last heard


@dataclass(frozen=True)
class Teardown:
    """What tearing an attempt down took: seconds, and the nodes that did not confirm it."""

    seconds: float
    unreachable: tuple[str, ...]


def start_channels(cfg: LaunchSpec, runners: Mapping, run_id: str, attempt: int, port: int,
                   stderr_path: Path) -> list[NodeChannel]:
    """A watchdog channel per host of the launch (this machine's own when it names none). Started from a few
    threads at once: each start waits for its ssh to exec, and 32 of them one after the other took about a
    second of a restart on a loaded controller (benchmarks/fault_detect.py)."""
    policy = cfg.supervision

    def one(host: str) -> NodeChannel:
        runner, node = runners.get(host), getattr(runners.get(host), "node_spec", None)
        return NodeChannel(host, runner or LocalRunner(), cfg.python, run_id, ping_timeout=policy.ping_timeout,
                           grace=policy.grace, master_port=port, attempt=attempt,
                           address=node and (node.address, node.ssh_port), stderr_path=stderr_path)

    return run_parallel(one, list(cfg.host_names) or ["localhost"], max_workers=8)


class AttemptWatch:
    """One attempt, watched (see the module's docstring). `chans`: its nodes' channels (none for a backend
    whose scheduler watches the nodes); `lost(now)`: the backend's hook, asked at every look; a
    `stall_timeout` of 0/None measures no idle time."""

    def __init__(self, chans: Sequence[NodeChannel], *, run_dir: Path, log_path: Path,
                 lost: Callable[[float], explainer.Explanation | None] = lambda now: None,
                 stall_timeout: float | None = None):
        self.chans = list(chans)
        self._pinger = Pinger(self.chans)
        self.run_dir, self.log_path = Path(run_dir), Path(log_path)
        self._lost, self._stall_timeout = lost, stall_timeout
        self.runner: subprocess.Popen | None = None
        self._offset, self._world, self._ranks_ok = 0, 0, 0
        self._mark, self._last_progress = (), time.monotonic()
        self._build_since: float | None = None  # since when a node's watchdog says an op compiles
        self.lingering = False  # a clean end: the channels are closed once the run's end is recorded

    def runner_started(self, runner: subprocess.Popen, log_offset: int, world: int) -> None:
        """DeepSpeed's runner started; its output follows `log_offset` in the launcher log."""
        self.runner, self._offset, self._world = runner, log_offset, world
        self._mark, self._last_progress = progress_mark(self.run_dir), time.monotonic()

    def probe(self) -> None:
        """A node whose heartbeats paused has its sshd asked, in the background (probe.py)."""
        for ch in self.chans:
            ch.check(detect.SUSPECT_AFTER)

    def observe(self) -> Observation:
        assert self.runner is not None, "observe() before runner_started()"
        now = time.monotonic()
        rc = self.runner.poll()
        text, self._offset = read_new(self.log_path, self._offset)
        self._ranks_ok += len(detect.RANK_OK.findall(text))
        idle = 0.0
        if self._stall_timeout:
            mark = progress_mark(self.run_dir)
            building = any(ch.building for ch in self.chans if not ch.closed)
            self._build_since = (self._build_since or now) if building else None
            if mark != self._mark:
                self._mark, self._last_progress = mark, now
            elif building and now - self._build_since < BUILD_MAX_S:
                self._last_progress = now  # an op compiles (silent for minutes on a fresh cache): no stall
            idle = now - self._last_progress
        ranks = tuple(r for ch in self.chans for r in hang.parse(ch.prog, ch.node, ch.prog_age()))
        return Observation(now, rc, text, self._ranks_ok, self._world, tuple(ch.view() for ch in self.chans),
                           idle, self._lost(now) if rc is None else None, ranks)

    def busy_after(self, wait: float = 3.0) -> list[str]:
        """After the runner exited 0: the nodes whose watchdog still counts processes of the run once `wait`
        seconds have passed (heartbeats come every second); [] as soon as none does."""
        deadline = time.monotonic() + wait
        while True:
            busy = [ch.node for ch in self.chans if ch.last_hb is not None and not ch.closed and ch.procs > 0]
            if not busy or time.monotonic() >= deadline:
                return busy
            time.sleep(0.2)

    def dead_rank(self, host: str | None, wait: float = 3.0) -> int | None:
        """The rank that vanished first on `host`, as its watchdog's heartbeats saw it; None when unknown or
        when several went at the same heartbeat. A rank's death shows in the launcher output up to a second
        before the next heartbeat, so wait for that one."""
        chan = next((ch for ch in self.chans if ch.node == host), self.chans[0] if len(self.chans) == 1 else None)
        if chan is None:
            return None
        deadline = time.monotonic() + wait
        while chan.first_gone() is None and time.monotonic() < deadline and not chan.closed:
            time.sleep(0.1)
        gone = chan.first_gone()
        return gone[1][0] if gone and len(gone[1]) == 1 else None

    def went_first(self, host: str | None, margin: float = 0.3) -> tuple[str, int] | None:
        """(host, rank) when a rank of another node than `host` vanished clearly before any of `host`'s did
        (`margin`: more than a heartbeat, as the nodes' heartbeats are not in step): the rank that died first, when
        the failure was seen on a survivor (its "connection closed" printed before the dead node's launcher
        said anything). None when `host`'s own went first, or it is not clear (no heartbeat saw `host`'s go)."""
        mine = next((ch.first_gone() for ch in self.chans if ch.node == host), None)
        others = self._gone_on_others(host)
        if mine is None or not others:
            return None
        t, node, ranks = min(others)
        if len(ranks) != 1 or t > mine[0] - margin:
            return None
        return node, ranks[0]

    def gone_elsewhere(self, host: str | None, wait: float) -> tuple[str, int] | None:
        """(host, rank) of the first rank another node than `host` vanished (by its heartbeats), waiting up to `wait`
        seconds for one: a survivor's launcher can speak of its dead peer before that peer's node heartbeats again
        (seen in CI on a loaded machine). None when none went, or several went at one heartbeat."""
        deadline = time.monotonic() + wait
        while True:
            others = self._gone_on_others(host)
            if others:
                _, node, ranks = min(others)
                return (node, ranks[0]) if len(ranks) == 1 else None
            if time.monotonic() >= deadline or all(ch.closed for ch in self.chans if ch.node != host):
                return None
            time.sleep(0.1)

    def _gone_on_others(self, host: str | None) -> list[tuple[float, str, list[int]]]:
        """(when, node, ranks) of the first ranks each node other than `host` saw vanish, by its heartbeats."""
        return [(g[0], ch.node, g[1]) for ch in self.chans if ch.node != host and (g := ch.first_gone())]

    def teardown(self, run_id: str, attempt: int, *, grace: float, settled: bool = False, final: bool = False,
                 cancel: Callable[[], None] = lambda: None,
                 reap_remote: Callable[[list[str]], object] = lambda hosts: None) -> Teardown:
        """Kill this run's processes on every node, using only the run's own marker. `settled` (a clean end): a
        node reporting none of them is not waited for (nothing to reap, no runner to start one). `final`: the
        run ends, the next attempt's pre-warmed launchers go too. `cancel`: the backend's own part (a scheduler: only
        this attempt's step); `reap_remote(hosts)`: one more try over a fresh ssh on nodes whose line is dead."""
        t0 = time.monotonic()
        # A node that stopped answering (crash, partition) reaps itself: its watchdog's pings stop.
        lost = {ch.node for ch in self.chans if ch.closed or ch.silent_for() > detect.SUSPECT_AFTER}
        clear = {ch.node for ch in self.chans if settled and ch.last_hb is not None and ch.procs == 0}
        for ch in self.chans:
            ch.send(f"kill {grace}" + (" all" if final else ""))
        deadline = t0 + grace + 2.0  # the ranks' grace to exit on SIGTERM before the runner side goes
        for ch in self.chans:
            if ch.node not in lost | clear:
                ch.wait_reaped(max(0.1, deadline - time.monotonic()))
        cancel()
        if self.runner is not None:  # the runner, pdsh and the ssh clients on this machine
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.runner.pid, signal.SIGKILL)
        reap(run_id, grace=0.5, upto=None if final else attempt)
        if self.runner is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.runner.wait(timeout=5)
        # Nodes whose watchdog line is dead (a partitioned node reaps itself when the pings stop, after ping_timeout).
        left = [ch.node for ch in self.chans if ch.node not in lost and not (ch.reaped or ch.procs == 0)]
        if left:
            reap_remote(left)
        return Teardown(round(time.monotonic() - t0, 2),
                        tuple(ch.node for ch in self.chans if ch.node in lost or (ch.closed and not ch.reaped)))

    def close(self, wait: bool = True) -> None:
        """The pings stop and every channel closes (`wait=False`: hung up only; a later close waits)."""
        self._pinger.stop()
        close_all(self.chans, wait=wait)

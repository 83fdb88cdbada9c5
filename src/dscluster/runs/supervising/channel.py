"""The supervisor's line to one node's watchdog (runs/supervising/watchdog.py): start it, ping it, read its heartbeats.

A NodeChannel is a child process of the supervisor: `ssh <node> python -m dscluster.runs.supervising.watchdog ...`
for a cluster node, or the watchdog itself for a local run. Its stdin is a pipe only the supervisor
holds, so if the supervisor dies (even by SIGKILL) the watchdog sees EOF and reaps the run there.

The signals a channel gathers for runs/supervising/detect.py, each cheap at 32 nodes: the heartbeats (every quarter
second), the session closing, the ranks the watchdog sees stopped, the ranks' own progress through their
collectives (`prog`, for runs/supervising/hang.py), and, once the heartbeats pause, an
independent probe of the node's sshd (runs/supervising/probe.py) in a thread of its own. `Pinger` pings every channel
from one thread that never touches a disk, so a slow shared disk or a busy supervisor loop does not make
the watchdogs reap a healthy run.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from dscluster.cluster.runner import Runner
from dscluster.fsutil import open_append
from dscluster.runs.supervising.probe import Probe
from dscluster.safepython import module_argv

STOPPED_FOR = 0.5  # a rank seen stopped this long (two heartbeats at least) is frozen, not a debugger's blink


class NodeChannel:
    def __init__(self, node: str, runner: Runner, python: str, run_id: str, *,
                 ping_timeout: float = 3.0, grace: float = 3.0, stderr_path: Path | None = None,
                 master_port: int = 0, attempt: int | None = None, address: tuple[str, int] | None = None):
        self.node = node
        cmd = [*module_argv(python, "dscluster.runs.supervising.watchdog", unbuffered=True), run_id, f"--ping-timeout={ping_timeout}",
               f"--grace={grace}", f"--master-port={master_port}", *([f"--attempt={attempt}"] if attempt else [])]
        self.probe = Probe(address)  # the node's sshd, asked when the heartbeats pause (None: a local run)
        # logs/ is the node user's to write: never follow a symlink planted there (fsutil.open_file).
        self._err = open_append(stderr_path) if stderr_path else subprocess.DEVNULL
        self.proc = runner.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                 start_new_session=True, close_fds=True)
        self.started = time.monotonic()
        self.last_hb: float | None = None
        self.procs = 0
        self.ranks_gone: dict[int, float] = {}  # rank -> when a heartbeat first missed it (before a kill)
        self._ranks_seen: set[int] = set()
        self.stopped: tuple[int, ...] = ()  # ranks the watchdog reports stopped
        self._stopped_since: float | None = None
        self._kill_sent = False
        self.reaped: str | None = None
        self.prog, self._prog_at = "", 0.0  # the ranks' progress, as the last heartbeat said it (runs/supervising/hang.py)
        self.building = False  # the last heartbeat said a process of the run compiles an op (torch's JIT build lock)
        self.closed = False  # its stdout reached EOF: the ssh session (or the node) is gone
        self._lock = threading.Lock()
        self._ready = threading.Event()
        threading.Thread(target=self._read, name=f"watchdog-{node}", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").strip()
            now = time.monotonic()
            if line.startswith("hb "):
                self.last_hb = now
                try:
                    self.procs = int(line.split()[1])
                except (IndexError, ValueError):
                    pass
                self._note_ranks(line, now)
                self.building = " build=1" in line
                self.prog, self._prog_at = next((w[5:] for w in line.split() if w.startswith("prog=")), ""), now
                self._ready.set()
            elif line.startswith("reaped"):
                self.reaped = line
        self.closed = True
        self._ready.set()

    def _note_ranks(self, line: str, now: float) -> None:
        """From `hb N ranks=0,1`: a rank seen before and missing now, while no kill was sent, has died."""
        self._note_stopped(line, now)
        word = next((w for w in line.split() if w.startswith("ranks=")), None)
        if word is None:
            return
        ranks = {int(r) for r in word[6:].split(",") if r.isdigit()}
        if not self._kill_sent:
            for r in self._ranks_seen - ranks:
                self.ranks_gone.setdefault(r, now)
        self._ranks_seen |= ranks

    def _note_stopped(self, line: str, now: float) -> None:
        word = next((w for w in line.split() if w.startswith("stopped=")), "stopped=")
        stopped = tuple(int(r) for r in word[8:].split(",") if r.isdigit())
        if stopped != self.stopped:
            self.stopped, self._stopped_since = stopped, (now if stopped else None)

    def frozen_ranks(self) -> tuple[int, ...]:
        """The ranks stopped for STOPPED_FOR seconds at least (before any kill): a frozen rank's collectives
        hang every other rank."""
        if self._kill_sent or self._stopped_since is None or self.last_hb is None:
            return ()
        return self.stopped if self.last_hb - self._stopped_since >= STOPPED_FOR else ()

    def prog_age(self) -> float:
        """Seconds since the heartbeat that carried `prog`."""
        return time.monotonic() - self._prog_at

    def first_gone(self) -> tuple[float, list[int]] | None:
        """(when, ranks) of the earliest heartbeat that missed ranks of this node, or None."""
        if not self.ranks_gone:
            return None
        t = min(self.ranks_gone.values())
        return t, sorted(r for r, when in self.ranks_gone.items() if when == t)

    def wait_ready(self, timeout: float) -> bool:
        """True once the first heartbeat arrived (the node answers and can run the watchdog)."""
        self._ready.wait(timeout)
        return self.last_hb is not None

    def send(self, line: str) -> bool:
        if line.startswith("kill"):
            self._kill_sent = True  # ranks vanishing from now on are the teardown's, not a death
        with self._lock:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write((line + "\n").encode())
                self.proc.stdin.flush()
                return True
            except (BrokenPipeError, OSError, ValueError):
                return False

    def view(self):
        """What the channel shows now, for the supervisor's failure detection (runs/supervising/detect.py)."""
        from dscluster.runs.supervising.detect import NodeView

        silent = self.silent_for()
        return NodeView(self.node, self.last_hb is not None, self.closed, bool(self.reaped), silent,
                        unanswered=self.probe.failed_since(self.last_hb), frozen=self.frozen_ranks())

    def check(self, suspect_after: float) -> None:
        """Ask the node's sshd (in the background) once its heartbeats have paused `suspect_after` seconds."""
        if self.last_hb is not None and not self.closed and self.silent_for() > suspect_after:
            self.probe.start(self.last_hb)

    def silent_for(self) -> float:
        ref = self.last_hb if self.last_hb is not None else self.started
        return time.monotonic() - ref

    def wait_reaped(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.reaped or self.closed:
                return bool(self.reaped) or self.procs == 0
            time.sleep(0.1)
        return False

    def hang_up(self) -> None:
        """Say goodbye: the watchdog exits (its stdin reaches EOF too), and the ssh session with it."""
        self.send("exit")
        with self._lock:
            try:
                if self.proc.stdin:
                    self.proc.stdin.close()
            except OSError:
                pass

    def close(self, deadline: float | None = None) -> None:
        """Say goodbye and make sure the ssh client process is gone (by `deadline`, a time.monotonic())."""
        self.hang_up()
        # A silent node (partition) would keep its ssh client waiting for the TCP timeout.
        wait = 0.5 if self.silent_for() > 5 else 3.0
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - time.monotonic()))
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._err is not subprocess.DEVNULL:
            self._err.close()


class Pinger:
    """Pings every channel every `every` seconds from a thread of its own: nothing it does waits on a disk
    or on the supervisor's loop (log reading, run.json writes), so only a dead link silences it."""

    def __init__(self, chans: list[NodeChannel], every: float = 0.25):
        self.chans, self.every = chans, every
        self._done = threading.Event()
        threading.Thread(target=self._loop, name="pinger", daemon=True).start()

    def _loop(self) -> None:
        while not self._done.is_set():
            for ch in self.chans:
                if not ch._kill_sent:
                    ch.send("ping")
            self._done.wait(self.every)

    def stop(self) -> None:
        self._done.set()


def close_all(chans: list[NodeChannel], wait: bool = True) -> None:
    """Close every node's channel at once: all hang up first, then each is waited for against one common
    deadline, so closing takes as long as the slowest node, not the sum over the nodes. `wait=False` only
    hangs up (the watchdogs exit on their own); a later close_all of the same channels waits for them."""
    for ch in chans:
        ch.hang_up()
    if not wait:
        return
    deadline = time.monotonic() + 3.0
    for ch in chans:
        ch.close(deadline)

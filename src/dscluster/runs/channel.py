"""The supervisor's line to one node's watchdog (runs/watchdog.py): start it, ping it, read its heartbeats.

A NodeChannel is a child process of the supervisor: `ssh <node> python -m dscluster.runs.watchdog ...`
for a cluster node, or the watchdog itself for a local run. Its stdin is a pipe only the supervisor
holds, so if the supervisor dies (even by SIGKILL) the watchdog sees EOF and reaps the run there.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from dscluster.cluster.runner import Runner
from dscluster.fsutil import open_append
from dscluster.safepython import module_argv


class NodeChannel:
    def __init__(self, node: str, runner: Runner, python: str, run_id: str, *,
                 ping_timeout: float = 15.0, grace: float = 3.0, stderr_path: Path | None = None,
                 master_port: int = 0):
        self.node = node
        cmd = [*module_argv(python, "dscluster.runs.watchdog", unbuffered=True), run_id, f"--ping-timeout={ping_timeout}",
               f"--grace={grace}", f"--master-port={master_port}"]
        # logs/ is the node user's to write: never follow a symlink planted there (fsutil.open_file).
        self._err = open_append(stderr_path) if stderr_path else subprocess.DEVNULL
        self.proc = runner.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                 start_new_session=True, close_fds=True)
        self.started = time.monotonic()
        self.last_hb: float | None = None
        self.procs = 0
        self.ranks_gone: dict[int, float] = {}  # rank -> when a heartbeat first missed it (before a kill)
        self._ranks_seen: set[int] = set()
        self._kill_sent = False
        self.reaped: str | None = None
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
                self._ready.set()
            elif line.startswith("reaped"):
                self.reaped = line
        self.closed = True
        self._ready.set()

    def _note_ranks(self, line: str, now: float) -> None:
        """From `hb N ranks=0,1`: a rank seen before and missing now, while no kill was sent, has died."""
        word = next((w for w in line.split() if w.startswith("ranks=")), None)
        if word is None:
            return
        ranks = {int(r) for r in word[6:].split(",") if r.isdigit()}
        if not self._kill_sent:
            for r in self._ranks_seen - ranks:
                self.ranks_gone.setdefault(r, now)
        self._ranks_seen |= ranks

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
        """What the channel shows now, for the supervisor's failure detection (runs/detect.py)."""
        from dscluster.runs.detect import NodeView

        return NodeView(self.node, self.last_hb is not None, self.closed, bool(self.reaped), self.silent_for())

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


def close_all(chans: list[NodeChannel]) -> None:
    """Close every node's channel at once: all hang up first, then each is waited for against one common
    deadline, so closing takes as long as the slowest node, not the sum over the nodes."""
    for ch in chans:
        ch.hang_up()
    deadline = time.monotonic() + 3.0
    for ch in chans:
        ch.close(deadline)

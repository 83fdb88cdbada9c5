"""The node agent's process keeper: its children (sshd, the lab or hub, stats), PID 1's reaping, a clean stop.

It reaps every exited process, re-parented orphans included (a container's PID 1 must, or finished ranks
pile up as zombies), and on SIGTERM/SIGINT/SIGHUP stops every child: SIGTERM to its process group, SIGKILL
after STOP_GRACE_S.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from dscluster.i18n import tr

STOP_GRACE_S = 10.0


class Supervisor:
    """Runs the children, reaps every process (PID 1 duty), stops everything on SIGTERM/SIGINT."""

    def __init__(self) -> None:
        self.stop_signal: int | None = None
        self.read_fd, write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_stop)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd sees it

    def _on_stop(self, signum, _frame) -> None:
        self.stop_signal = self.stop_signal or signum

    def reap(self) -> dict[int, int]:
        """Collect every exited child (including re-parented orphans): {pid: exit status}."""
        done = {}
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return done
            if pid == 0:
                return done
            done[pid] = os.waitstatus_to_exitcode(status)

    def wait(self, timeout: float) -> None:
        select.select([self.read_fd], [], [], timeout)
        try:
            while os.read(self.read_fd, 512):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def run(self, main: subprocess.Popen, extra: list[subprocess.Popen],
            tick: Callable[[], list[subprocess.Popen]] | None = None, every: float = 3.0) -> int:
        """Until `main` exits or a stop signal; `tick` every `every` seconds may start more children."""
        children = {main.pid: main, **{p.pid: p for p in extra}}
        due = time.monotonic() + every
        while True:
            if tick is not None and time.monotonic() >= due:
                children.update({p.pid: p for p in tick()})
                due = time.monotonic() + every
            for pid, code in self.reap().items():
                if pid == main.pid:
                    print(tr("dscluster node: sshd exited with {code}", code=code), file=sys.stderr)
                    self._terminate([p for p in children.values() if p is not main])
                    return code if code else 1
                if pid in children:
                    children[pid].returncode = code
            if self.stop_signal:
                print(tr("dscluster node: stopping (signal {sig})", sig=self.stop_signal), file=sys.stderr)
                self._terminate(list(children.values()))
                return 0
            self.wait(1.0)

    def _terminate(self, procs: list[subprocess.Popen]) -> None:
        alive = [p for p in procs if p.returncode is None]
        for p in alive:
            try:  # os.kill, not p.terminate(): Popen.poll() would reap it behind the supervisor's back
                if os.getpgid(p.pid) == p.pid:
                    os.killpg(p.pid, signal.SIGTERM)
                else:
                    os.kill(p.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + STOP_GRACE_S
        pending = {p.pid for p in alive}
        while pending and time.monotonic() < deadline:
            for pid in self.reap():
                pending.discard(pid)
            if pending:
                self.wait(0.1)
        for pid in pending:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.reap()

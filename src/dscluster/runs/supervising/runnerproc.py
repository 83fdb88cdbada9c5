"""How the supervisor starts DeepSpeed's runner for an attempt: cold, or from one held ready.

DeepSpeed's runner imports torch and DeepSpeed (about 2 s of CPU) before it starts pdsh. While another
attempt may follow, the supervisor starts the next runner (`RunnerHold.start`) once the attempt has run a
few seconds, or at once when it fails: it imports while the attempt runs (or is torn down and its lost
nodes are awaited), then waits on stdin for
its argv and environment (launcher/warm.py `hold`). The next attempt takes it (`RunnerHold.take`) and the
runner starts pdsh within milliseconds of the heal; without one (the first attempt, a hold that died),
the runner starts cold as before. Either way the process is the runner: its own session, killed with
the supervisor (PR_SET_PDEATHSIG), its output into the launcher log (or the secret mask's pipe).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import signal
import subprocess
import threading

from dscluster.launcher import warm
from dscluster.launcher.masklog import copy_masked
from dscluster.safepython import module_argv


def set_pdeathsig() -> None:
    """Child-side: die with the supervisor. Without this a SIGKILLed supervisor leaves the runner."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def mask_output(runner: subprocess.Popen, log, secrets) -> None:
    """Copy the runner's output into the launcher log with every secret value masked (launcher/masklog.py):
    the launcher's relay of what the ranks print (pdsh's, an MPI launcher's) passes here."""

    def copy() -> None:
        def write(data: bytes) -> None:
            try:
                log.write(data)
                log.flush()
            except OSError:
                pass  # a full disk: the output is lost, never the run (the pipe keeps draining)

        try:
            copy_masked(runner.stdout.fileno(), write, secrets)
        finally:
            runner.stdout.close()
            with contextlib.suppress(OSError):
                log.close()

    threading.Thread(target=copy, name="launcher-log", daemon=True).start()


def _popen(argv: list[str], *, env, cwd: str, stdout, stdin) -> subprocess.Popen:
    return subprocess.Popen(argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT, stdin=stdin,
                            start_new_session=True, preexec_fn=set_pdeathsig)


def prestart_nodes(runners, hosts, python: str, run_id: str, attempt: int, linger: float) -> None:
    """Nodes that were gone and answer again: a restarted one lost its pre-warmed launch.py (launcher/warm.py), so
    one is started there now (`warm prestart`), importing while the next attempt is prepared and its runner starts
    pdsh. In the background; where it fails, or a warm one is there already, the node goes on as before."""
    argv = [*module_argv(python, "dscluster.launcher.warm", unbuffered=True), "prestart", run_id, str(attempt),
            f"{linger:.0f}"]
    for host in hosts:
        runner = runners.get(host)
        if runner is not None:
            threading.Thread(target=runner.run, args=(argv,), kwargs={"timeout": 30.0}, name=f"prestart-{host}",
                             daemon=True).start()


def start_cold(argv: list[str], *, env, cwd: str, stdout) -> subprocess.Popen:
    return _popen(argv, env=env, cwd=cwd, stdout=stdout, stdin=subprocess.DEVNULL)


class RunnerHold:
    """At most one runner held ready for the next attempt."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.module: str | None = None

    def start(self, argv: list[str], *, env, cwd: str, stdout) -> None:
        """Start importing the runner that `argv` (the last attempt's runner argv) names."""
        self.drop()
        call = warm.module_call(argv)
        if call is None:
            return
        self.module = call[0]
        with contextlib.suppress(OSError):
            self.proc = _popen([*module_argv(argv[0], "dscluster.launcher.warm", unbuffered=True), "hold",
                                self.module], env=env, cwd=cwd, stdout=stdout, stdin=subprocess.PIPE)

    def ready(self) -> bool:
        """Whether a held runner is there (importing or waiting)."""
        return self.proc is not None and self.proc.poll() is None

    def take(self, argv: list[str], *, env, cwd: str) -> subprocess.Popen | None:
        """The held runner, started with this argv and environment; None when there is none to use."""
        proc, self.proc = self.proc, None
        call = warm.module_call(argv)
        if proc is None or call is None or call[0] != self.module or proc.poll() is not None:
            self._end(proc)
            return None
        module, executable, args = call
        line = json.dumps({"args": args, "env": dict(env), "cwd": cwd, "executable": executable}) + "\n"
        try:
            proc.stdin.write(line.encode())
            proc.stdin.close()
        except OSError:
            self._end(proc)
            return None
        return proc

    def drop(self) -> None:
        proc, self.proc = self.proc, None
        self._end(proc)

    @staticmethod
    def _end(proc: subprocess.Popen | None) -> None:
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)

"""Helpers shared by the cluster tests: polling (a fault's effect shows up within a deadline, not at once)
and the `dscluster` command line (support.run_cli) run against a simulated cluster: `sim_cli` in its
shared directory, `SimCli` (the `cli` fixture of tests/cluster/conftest.py) adding `--cluster` where a
command reads a run, `cli_runner` in a directory of the test's own."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from support import CLI, run_cli


def wait_for(pred, timeout: float, interval: float = 0.25):
    """pred()'s first truthy value within `timeout` seconds, else its value at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    return pred()


def logs_tail(run_dir: Path, lines: int = 25) -> str:
    """The end of the run's events and of every log (launcher, ranks): what a failed assertion shows."""
    events = run_dir / "events.jsonl"
    out = events.read_text(errors="replace").splitlines()[-lines:] if events.exists() else []
    for path in sorted((run_dir / "logs").glob("*.log")):
        out += [f"--- {path.name}", *path.read_text(errors="replace").splitlines()[-lines:]]
    return "\n".join(out)


def run_masters(run_id: str) -> dict[str, int]:
    """The run's own ssh masters (runs/supervising/masters.py: their ControlPath carries the run's hash): node -> PID."""
    import hashlib

    tag, found = f"r{hashlib.sha1(run_id.encode()).hexdigest()[:8]}-".encode(), {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"ssh") and b"-M" in argv and any(tag in a for a in argv):
            found[argv[-2 if argv[-1] == b"" else -1].decode()] = int(entry)
    return found


def cli_runner(sim, cwd: Path):
    """`run("launch", ...)`: the dscluster CLI in `cwd`, finding the simulated cluster `sim` by its home
    (no DSCLUSTER_CLUSTER / DSCLUSTER_SHARED from the test's own environment); `run.env` is that environment."""
    env = {**os.environ, "DSCLUSTER_HOME": str(Path(sim.spec_path).parents[2])}
    env.pop("DSCLUSTER_CLUSTER", None)
    env.pop("DSCLUSTER_SHARED", None)

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return run_cli(*args, env=env, cwd=cwd, timeout=timeout)
    run.env = env
    return run


def sim_cli(sim, env, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The command line in the simulated cluster's shared directory, with `env`, its arguments as given."""
    return run_cli(*args, env=env, cwd=sim.spec.shared_dir, timeout=timeout)


class SimCli:
    """`cli("launch", ...)`: `sim_cli` bound to a cluster and an environment. The commands that read a run
    (`reads`) get `--cluster SPEC` added after their arguments; `extra` adds variables to one call."""

    READS = ("status", "stop", "logs", "runs", "ckpt")

    def __init__(self, sim, env, *, reads: tuple[str, ...] = READS, timeout: float = 600):
        self.sim, self.env, self.cwd = sim, env, str(sim.spec.shared_dir)
        self.reads, self.timeout = reads, timeout

    def argv(self, *args: str) -> list[str]:
        """What `__call__` runs, for a test that starts it itself (Popen)."""
        return [*CLI, *args]

    def args(self, *args: str) -> tuple[str, ...]:
        if args and args[0] in self.reads:
            return (*args, "--cluster", str(self.sim.spec_path))
        return args

    def __call__(self, *args: str, timeout: float | None = None,
                 extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return run_cli(*self.args(*args), env={**self.env, **extra} if extra else self.env, cwd=self.cwd,
                       timeout=self.timeout if timeout is None else timeout)

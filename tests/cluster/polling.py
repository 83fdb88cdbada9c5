"""Helpers shared by the launch tests: polling (a fault's effect shows up within a deadline, not at once)
and the `dscluster` command line run as a user would, against a simulated cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def wait_for(pred, timeout: float, interval: float = 0.25):
    """pred()'s first truthy value within `timeout` seconds, else its value at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    return pred()


def cli_runner(sim, cwd: Path):
    """`run("launch", ...)`: the dscluster CLI in `cwd`, finding the simulated cluster `sim` by its home
    (no DSCLUSTER_CLUSTER / DSCLUSTER_SHARED from the test's own environment); `run.env` is that environment."""
    env = {**os.environ, "DSCLUSTER_HOME": str(Path(sim.spec_path).parents[2])}
    env.pop("DSCLUSTER_CLUSTER", None)
    env.pop("DSCLUSTER_SHARED", None)

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
    run.env = env
    return run

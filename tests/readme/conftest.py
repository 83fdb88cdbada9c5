"""The README session: what the README's commands touch is put back afterwards, pass or fail.

The blocks run with the reader's defaults (DSCLUSTER_HOME ~/.dscluster, the simulated cluster "default",
runs of this machine in ~/.dscluster/local), so this fixture
- refuses to start when a simulated cluster "default" is up (the README's `sim up 3` would replace it);
- afterwards stops every run the blocks started, `sim down --purge`s the default cluster, removes the
  runs the blocks made in ~/.dscluster/local/runs, the paths of blocks.CREATES that did not exist
  before, and the reader's files GIVEN made; nothing that existed before is removed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import readme_blocks as blocks
from support import VENV_CLI, run_cli

HOME = Path.home()
LOCAL_RUNS = HOME / ".dscluster" / "local" / "runs"
SIM_SPEC = HOME / ".dscluster" / "sims" / "default" / "dscluster.toml"  # the README's `sim up 3`


def reader_env() -> dict[str, str]:
    """The reader's shell after `source .venv/bin/activate`: no DSCLUSTER_* override, the venv first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DSCLUSTER_", "SLURM_"))}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    env["VIRTUAL_ENV"] = str(Path(sys.executable).parent.parent)
    env.pop("PYTHONPATH", None)
    return env


def dscluster(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_cli(*argv, cwd=blocks.ROOT, env=reader_env(), timeout=timeout, entry=VENV_CLI)


def _local_runs() -> set[str]:
    return {p.name for p in LOCAL_RUNS.iterdir()} if LOCAL_RUNS.is_dir() else set()


class Session:
    def __init__(self, scratch: Path):
        self.scratch = scratch  # GIVEN's record of what it made (one path a line)
        self.given_log = scratch / "given.txt"
        self.runs_before = _local_runs()
        self.created_before = {rel for rel in blocks.CREATES if (blocks.ROOT / rel).exists()}

    def cleanup(self) -> list[str]:
        problems: list[str] = []
        # First every run the blocks started and left going (a launch into a pipe detaches: the Slurm
        # block's), on the default cluster and on this machine, while their nodes can still be reached;
        # their supervisors run here, outside the cluster's namespaces.
        for where in (["--cluster", str(SIM_SPEC)] if SIM_SPEC.exists() else [], []):
            listed = dscluster("runs", "--json", *where)
            try:
                runs = json.loads(listed.stdout or "[]")
            except ValueError:
                runs = []
            for run in runs:
                if run.get("id") not in self.runs_before and run.get("status") in ("running", "starting", "created",
                                                                                    "pending", "restarting"):
                    stopped = dscluster("stop", run["id"], *where, timeout=180)
                    if stopped.returncode != 0:
                        problems.append(f"stop {run['id']}: {stopped.stderr[-300:]}")
        down = dscluster("sim", "down", "--purge", timeout=300)
        if down.returncode != 0:
            problems.append(f"sim down --purge: {down.stdout[-500:]}{down.stderr[-500:]}")
        for name in _local_runs() - self.runs_before:
            shutil.rmtree(LOCAL_RUNS / name, ignore_errors=True)
        for rel in set(blocks.CREATES) - self.created_before:
            target = blocks.ROOT / rel
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            elif target.exists() or target.is_symlink():
                target.unlink()
        if self.given_log.exists():  # deepest first: a file, then the directory made for it
            for line in reversed(self.given_log.read_text().splitlines()):
                path = Path(line)
                if path.is_dir():
                    try:
                        path.rmdir()
                    except OSError:
                        pass  # the reader's own files are in it now: keep it
                else:
                    path.unlink(missing_ok=True)
        return problems


@pytest.fixture(scope="session")
def readme_session(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the README's simulated-cluster commands run as root")
    state = dscluster("sim", "status", "--json")
    if state.returncode == 0:
        pytest.skip("a simulated cluster 'default' is up: the README's `sim up 3` would replace it "
                    "(sim down it first, or run this test on another machine)")
    session = Session(tmp_path_factory.mktemp("readme"))
    try:
        yield session
    finally:
        problems = session.cleanup()
        assert not problems, "cleanup after the README blocks: " + "; ".join(problems)

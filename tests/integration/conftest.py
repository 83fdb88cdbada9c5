"""The trainer through the real `deepspeed` launcher, 2 CPU ranks with gloo (no mocks).

One stdlib corpus is prepared per test session and shared by every test here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import free_port

from dscluster.data.corpus import ensure_stdlib_corpus
from dscluster.runs.supervising.watchdog import remove_shm_buffers


@pytest.fixture(scope="session")
def stdlib_corpus(tmp_path_factory) -> Path:
    shared = tmp_path_factory.mktemp("shared")
    path, _ = ensure_stdlib_corpus(shared)
    return path


def launch(trainer_args: list[str], *, procs: int = 2, timeout: float = 300) -> subprocess.CompletedProcess:
    """`deepspeed --num_gpus 2 --module dscluster.train ...` on CPU, one BLAS thread per rank."""
    port = free_port()
    argv = [sys.executable, "-m", "deepspeed.launcher.runner", "--num_gpus", str(procs),
            "--master_port", str(port), "--module", "dscluster.train", *trainer_args]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": ""}
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    finally:
        # Plain DeepSpeed leaves its CPU all-reduce buffers in /dev/shm (dscluster's watchdog removes
        # them for its own runs); the suite must not eat the machine's RAM either.
        remove_shm_buffers(port)


@pytest.fixture(scope="session")
def ds_launch():
    """The `launch` helper as a fixture (test modules need no import path to this conftest)."""
    return launch

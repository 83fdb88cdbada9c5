"""Shared fixtures and marker gates.

Markers say what a test needs (root, browser, gpu); a test whose need is missing on this machine is
skipped with the reason. CI runs as root with Chromium installed, so only `gpu` tests skip there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - any import problem means no usable GPU
        return False


def pytest_collection_modifyitems(config, items):
    is_root = os.geteuid() == 0
    has_chromium = shutil.which("chromium") is not None
    gpu = None
    for item in items:
        if "root" in item.keywords and not is_root:
            item.add_marker(pytest.mark.skip(reason="needs root (network namespaces, sshd)"))
        if "browser" in item.keywords and not has_chromium:
            item.add_marker(pytest.mark.skip(reason="needs Chromium (scripts/setup.sh test installs it)"))
        if "gpu" in item.keywords:
            gpu = _has_gpu() if gpu is None else gpu
            if not gpu:
                item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU (runs on the device machine)"))


@pytest.fixture
def dscluster_home(tmp_path, monkeypatch):
    """Redirect every per-user state directory into tmp_path."""
    home = tmp_path / "dscluster-home"
    monkeypatch.setenv("DSCLUSTER_HOME", str(home))
    monkeypatch.setenv("DSCLUSTER_SHARED", str(tmp_path / "shared"))
    return home


def _in_triton_interpreter(argv: list[str]) -> dict:
    """Run a check in a fresh Python with Triton's CPU interpreter on (it runs the hand-written kernels
    block by block on CPU tensors); the check's last stdout line is its JSON report."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture
def in_triton_interpreter():
    """`in_triton_interpreter(["-c", CODE])` -> the check's JSON report (see _in_triton_interpreter)."""
    return _in_triton_interpreter

"""Shared fixtures and marker gates.

Markers say what a test needs (root, browser, gpu); a test whose need is missing on this machine is
skipped with the reason. CI runs as root with Chromium installed, so only `gpu` tests skip there.
"""

from __future__ import annotations

import os
import shutil

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

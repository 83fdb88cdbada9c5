from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from labserver import start_lab  # noqa: E402


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One real JupyterLab per test module (token auth), stopped at the end."""
    pytest.importorskip("jupyterlab")
    server = start_lab(tmp_path_factory.mktemp("lab"))
    yield server
    server.stop()

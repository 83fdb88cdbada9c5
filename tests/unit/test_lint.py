"""The code passes the lint rules chosen in pyproject.toml ([tool.ruff]): pyflakes, bugbear, import order,
pyupgrade. A new unused import, undefined name or late-binding closure fails here, not in review."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> str:
    here = Path(sys.executable).with_name("ruff")
    found = str(here) if here.exists() else shutil.which("ruff")
    if not found:
        pytest.skip("ruff is not installed (it comes with the test extra: pip install -e '.[test]')")
    return found


def test_source_tests_and_benchmarks_pass_ruff():
    proc = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "src", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]

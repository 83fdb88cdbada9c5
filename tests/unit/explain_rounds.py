"""What the per-round explainer tests (test_explain_round*.py) share: the signature a log is answered with, and the
zh-TW catalog of the failure texts every new family must be in."""

from __future__ import annotations

import json
from pathlib import Path

from dscluster import explain

SRC = Path(__file__).resolve().parents[2] / "src" / "dscluster"
FAILURES_ZH: dict[str, str] = json.loads((SRC / "locale" / "zh_TW" / "failures.json").read_text(encoding="utf-8"))


def sig(text: str) -> str | None:
    found = explain.explain(text)
    return found.signature if found else None

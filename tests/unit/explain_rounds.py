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


def translated_and_final(names) -> dict:
    """Each new signature's cause and fix in the zh-TW catalog and no restart offered (a refusal repeats); the table by
    name, for a round's own further checks."""
    by_name = {s.name: s for s in explain.SIGNATURES}
    for name in names:
        s = by_name[name]
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH, name
        assert not s.retry, name
    return by_name

"""Every message doctor shows has a zh-TW translation with the same placeholders."""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

import dscluster
from dscluster.i18n import catalog

SRC = Path(dscluster.__file__).parent
# doctor's own checks, and each launcher backend's check of its tools (launcher/backends: check_tools)
FILES = sorted((SRC / "doctor").glob("*.py")) + [SRC / "commands" / "doctor.py"] + \
    sorted((SRC / "launcher" / "backends").rglob("*.py"))


def templates() -> set[str]:
    found = set()
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
                assert isinstance(node.args[0], ast.Constant), f"{path}: tr() needs a literal template"
                found.add(node.args[0].value)
    return found


def fields(text: str) -> list[str]:
    return sorted(f[1] for f in string.Formatter().parse(text) if f[1])


def test_every_doctor_message_is_translated_with_the_same_placeholders():
    zh = catalog("zh_TW")
    found = templates()
    assert len(found) > 100
    missing = sorted(t for t in found if t not in zh)
    assert not missing, missing
    for t in found:
        assert fields(zh[t]) == fields(t), t
    own = json.loads((SRC / "locale" / "zh_TW" / "doctor.json").read_text(encoding="utf-8"))
    assert set(own) <= found | {"fix"}, sorted(set(own) - found)


def test_report_renders_in_traditional_chinese(monkeypatch):
    from test_doctor_checks import make_spec, run  # the fake-probe helpers

    from dscluster.doctor.render import render

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    report = run(make_spec(), lambda f: f[1]["shm"].update(total=1))
    text = render(report)
    assert "問題" in text and "給節點至少 1 GiB 的 /dev/shm" in text

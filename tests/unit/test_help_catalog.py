"""Every CLI help text and description goes through the catalog and has a zh-TW translation, and
argparse's own words (usage, required arguments, invalid values) come out in the user's language."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dscluster import cli
from dscluster.i18n import catalog

SRC = Path(__file__).resolve().parents[2] / "src" / "dscluster"
FILES = [*sorted((SRC / "commands").glob("*.py")), SRC / "cli.py"]


def _help_texts():
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg in ("help", "description"):
                yield path.name, node.lineno, node.value


def test_every_help_text_is_translated():
    zh = catalog("zh_TW")
    bare, untranslated, seen = [], [], 0
    for name, line, value in _help_texts():
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            bare.append(f"{name}:{line}")
        elif isinstance(value, ast.Call) and getattr(value.func, "id", None) == "tr":
            seen += 1
            if isinstance(value.args[0], ast.Constant) and value.args[0].value not in zh:
                untranslated.append(value.args[0].value)
    assert seen > 90
    assert not bare, f"help texts not wrapped in tr(): {bare}"
    assert not untranslated, untranslated


def test_argparse_speaks_the_users_language(monkeypatch, capsys):
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    with pytest.raises(SystemExit):
        cli.main(["status"])
    err = capsys.readouterr().err
    assert "用法：" in err and "缺少必要的參數：RUN" in err and "dscluster status --help" in err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--steps", "abc"])
    assert "參數 --steps：'abc' 不是整數" in capsys.readouterr().err
    monkeypatch.setenv("DSCLUSTER_LANG", "en")
    with pytest.raises(SystemExit):
        cli.main(["status"])
    assert "the following arguments are required: RUN" in capsys.readouterr().err

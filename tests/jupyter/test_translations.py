"""Every string the panel passes through the translator has a zh-TW translation, and JupyterLab's
own translation lookup (the `jupyterlab.locale` entry point) finds the catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CATALOG = REPO / "src" / "dscluster" / "jupyter" / "locale" / "zh_TW" / "LC_MESSAGES" / "dscluster.json"


def panel_strings() -> set[str]:
    found = set()
    for ts in (REPO / "labextension" / "src").glob("*.ts"):
        found |= set(re.findall(r"__\('((?:[^'\\]|\\.)*)'", ts.read_text(encoding="utf-8")))
    return found


def test_every_panel_string_has_a_zh_tw_translation():
    catalog = json.loads(CATALOG.read_text(encoding="utf-8"))
    assert catalog[""]["domain"] == "dscluster"
    strings = panel_strings()
    assert len(strings) > 30
    missing = sorted(s for s in strings if s not in catalog)
    assert not missing, missing
    for key, value in catalog.items():
        if key:
            assert value[0].count("%") == key.count("%"), key  # placeholders survive translation


def test_jupyterlab_finds_the_catalog_through_the_entry_point():
    translation_utils = pytest.importorskip("jupyterlab_server.translation_utils")
    data, message = translation_utils.get_installed_packages_locale("zh_TW")
    assert "dscluster" in data, message
    assert data["dscluster"]["Cluster"] == ["叢集"]


def test_every_server_and_notebook_message_has_a_zh_tw_translation():
    import ast

    from dscluster import i18n

    # The catalog merges every domain file; jupyter.json holds the templates no other file has.
    i18n.catalog.cache_clear()
    catalog = i18n.catalog("zh_TW")
    files = [*(REPO / "src/dscluster/jupyter").glob("*.py"), REPO / "src/dscluster/api.py"]
    messages = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                messages.add(node.args[0].value)
    assert len(messages) > 30
    assert not sorted(messages - set(catalog))
    for key in messages:
        assert sorted(re.findall(r"\{\w+", key)) == sorted(re.findall(r"\{\w+", catalog[key])), key


def test_api_errors_follow_the_language(monkeypatch):
    from dscluster import i18n
    from dscluster.jupyter import launching

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    i18n.catalog.cache_clear()
    with pytest.raises(Exception) as err:
        launching.parse_launch({"args": "x"})
    assert err.value.message == "缺少 'script'"

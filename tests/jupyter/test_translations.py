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

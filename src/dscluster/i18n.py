"""One message catalog for everything a user reads on the CLI (and the API's error messages).

Messages are looked up by their English template (gettext style), so code stays readable:

    from dscluster.i18n import tr
    raise ConfigError(tr("unknown preset {name!r}", name=p), tr("choose one of: {choices}", choices=...))

Translations live in `locale/<lang>/*.json` (one JSON object per domain file, English template ->
translation, all merged). The language comes from DSCLUSTER_LANG, then LC_ALL / LC_MESSAGES / LANG;
anything starting with `zh_TW`, `zh-TW`, `zh_Hant` selects Traditional Chinese.
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources

SUPPORTED = ("en", "zh_TW")


def current_language() -> str:
    for var in ("DSCLUSTER_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if not value:
            continue
        norm = value.replace("-", "_").lower()
        if norm.startswith(("zh_tw", "zh_hant", "zh_hk")):
            return "zh_TW"
        return "en"
    return "en"


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    if lang == "en":
        return {}
    merged: dict[str, str] = {}
    try:
        folder = resources.files("dscluster") / "locale" / lang
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                merged.update(json.loads(entry.read_text(encoding="utf-8")))
    except (FileNotFoundError, NotADirectoryError):
        pass
    return merged


def tr(template: str, /, **values: object) -> str:
    """Translate `template` to the current language, then fill in `values` with str.format."""
    text = catalog(current_language()).get(template, template)
    try:
        return text.format(**values) if values else text
    except (KeyError, IndexError, ValueError):
        # A broken translation must never hide the message itself.
        return template.format(**values) if values else template

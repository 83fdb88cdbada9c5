"""One message catalog for everything a user reads on the CLI (and the API's error messages).

Messages are looked up by their English template (gettext style), so code stays readable:

    from dscluster.i18n import tr
    raise ConfigError(tr("unknown preset {name!r}", name=p), tr("choose one of: {choices}", choices=...))

Translations live in `locale/<lang>/*.json` (one JSON object per domain file, English template ->
translation, all merged), and a launcher backend's own strings in its package, in
`launcher/backends/locale/<lang>/*.json` (one file per backend, named after it): a new backend's
translations touch neither this module nor the domain files (LOCALE_FOLDERS, read by `domain_files`).

The language comes from DSCLUSTER_LANG, then LC_ALL / LC_MESSAGES / LANG; anything starting with
`zh_TW`, `zh-TW`, `zh_Hant` selects Traditional Chinese. A server answering a request in its sender's
language wraps the work in `use_language(...)` (a context variable: it follows the request into
`asyncio.to_thread`, and never leaks into other requests).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import os
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SUPPORTED = ("en", "zh_TW")
# The folders under the dscluster package that hold `<lang>/*.json`: the domains', then the backends'.
LOCALE_FOLDERS = (("locale",), ("launcher", "backends", "locale"))
_REQUEST_LANGUAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar("dscluster_language", default=None)


def language_of(value: str) -> str:
    """A locale name (zh_TW, zh-TW, zh_Hant.UTF-8, en_US...) -> one of SUPPORTED."""
    norm = value.replace("-", "_").lower()
    return "zh_TW" if norm.startswith(("zh_tw", "zh_hant", "zh_hk")) else "en"


def current_language() -> str:
    requested = _REQUEST_LANGUAGE.get()
    if requested:
        return requested
    for var in ("DSCLUSTER_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return language_of(value)
    return "en"


@contextlib.contextmanager
def use_language(value: str | None) -> Iterator[None]:
    """Translate into `value`'s language inside (None or "": the process's own language)."""
    token = _REQUEST_LANGUAGE.set(language_of(value) if value else None)
    try:
        yield
    finally:
        _REQUEST_LANGUAGE.reset(token)


def domain_files(lang: str) -> list[Traversable]:
    """Every `<lang>/*.json` of LOCALE_FOLDERS, each folder's by name (a folder that is not there: none)."""
    found: list[Traversable] = []
    for parts in LOCALE_FOLDERS:
        folder = resources.files("dscluster")
        for part in (*parts, lang):
            folder = folder / part
        try:
            found += sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return found


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    if lang == "en":
        return {}
    merged: dict[str, str] = {}
    for entry in domain_files(lang):
        merged.update(json.loads(entry.read_text(encoding="utf-8")))
    return merged


def gettext(message: str) -> str:
    """The catalog's translation of `message`, unformatted: for argparse's own words (usage, options,
    "the following arguments are required: %s"), which it formats itself with %."""
    return catalog(current_language()).get(message, message)


def tr(template: str, /, **values: object) -> str:
    """Translate `template` to the current language, then fill in `values` with str.format."""
    text = catalog(current_language()).get(template, template)
    # Always formatted, values or not, so that a literal brace is written {{ in every template.
    for candidate in (text, template):  # a broken translation must never hide the message itself
        try:
            return candidate.format(**values)
        except (KeyError, IndexError, ValueError):
            continue
    return template  # not a template (text recorded earlier, with braces of its own): shown as it is


def tr_n(n: int, one: str, many: str, /, **values: object) -> str:
    """`tr` of `one` when n is 1, else of `many` ("1 node", "2 nodes"), with `n` among the values.
    Both English templates are catalog keys; a language without plurals gives them one translation."""
    return tr(one if n == 1 else many, n=n, **values)

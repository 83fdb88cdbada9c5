"""Small console helpers: glyphs that degrade when the terminal cannot encode them, and tables."""

from __future__ import annotations

import sys
import unicodedata

from dscluster.i18n import tr


def _can_encode(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "ascii")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


OK = "✓" if _can_encode("✓") else "+"
FAIL = "✗" if _can_encode("✗") else "x"
WARN = "!"
RETRY = "↺" if _can_encode("↺") else "~"


def width(text: str) -> int:
    """Display width: CJK characters take two columns (zh-TW messages must still align)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, cols: int) -> str:
    return text + " " * max(0, cols - width(text))


def table(headers: list[str], rows: list[list[str]]) -> str:
    cols = [max([width(h)] + [width(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(pad(c, w) for c, w in zip(cells, cols)).rstrip()  # noqa: E731
    out = [line(headers), line(["-" * w for w in cols])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def next_steps(*commands: str) -> str:
    """The closing 'what to do next' lines every command ends with."""
    return "\n".join(["", tr("Next:")] + [f"  {c}" for c in commands])

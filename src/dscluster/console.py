"""Small console helpers: glyphs that degrade when the terminal cannot encode them, and tables."""

from __future__ import annotations

import shutil
import sys
import unicodedata
from pathlib import Path

from dscluster.i18n import tr
from dscluster.logtext import printable


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


def runnable(command: str) -> str:
    """Make a suggested command work from the user's own shell.

    After `scripts/demo.sh` the venv is usually not activated, so a bare `dscluster` or `tensorboard`
    would not be found (or would be another install's): name this interpreter's bin dir instead.
    """
    program, _, rest = command.partition(" ")
    bindir = Path(sys.executable).parent
    if program == "python":
        found, ours = shutil.which("python"), sys.executable
    else:
        found, ours = shutil.which(program), str(bindir / program)
        if not Path(ours).exists():
            return command
    if found and Path(found).resolve() == Path(ours).resolve():
        return command
    return f"{ours} {rest}".rstrip()


def next_steps(*commands: str) -> str:
    """The closing 'what to do next' lines every command ends with."""
    return "\n".join(["", tr("Next:")] + [f"  {runnable(c)}" for c in commands])


def say(text: str = "", **kwargs) -> None:
    """print() for a line that holds what a log or a run record says: every control character in it is shown
    as its escape, never sent raw to the terminal (logtext.printable)."""
    print(printable(text), **kwargs)

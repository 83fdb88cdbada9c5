"""What a failure signature is: a pattern over log text, what it means, how to fix it, whether a restart can
help. The tables are signatures.py (the launch, network and build families) and sigmessages.py (causes read
from an exception's or a tool's own message)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    retry: bool = True  # whether a restart of the same command can help
    symptom: bool = False  # what the other ranks see when one fails: never the answer while a rank has its own error

    @property
    def restart_can_help(self) -> bool:
        return self.retry


def sig(name: str, regex: str, cause: str, fix: str, retry: bool = True, symptom: bool = False) -> Signature:
    return Signature(name, re.compile(regex, re.IGNORECASE | re.MULTILINE), cause, fix, retry, symptom)


def then(first: str, later: str, gap: str = ".") -> str:
    """A regex for `first`, then `later` further on the same line, in linear time: `first.*later` tries every
    occurrence of `first` against the rest of the line (a line of `NET/IB NET/IB ...` costs its length
    squared); here each stretch of the line is scanned from the one `first` before it. `gap`: what may stand
    between them (a character class). Every signature's pattern is measured for this on its own words
    (tests/unit/test_explain_linear.py)."""
    return f"(?:{first})(?:(?!{first}){gap})*(?:{later})"

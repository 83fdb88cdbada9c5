"""What a failure signature is: a pattern over log text, what it means, how to fix it, whether a restart can
help. The tables are signatures.py (the launch, network and build families) and sigmessages.py (causes read
from an exception's or a tool's own message)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    retry: bool = True  # whether a restart of the same command can help
    symptom: bool = False  # what the other ranks see when one fails: never the answer while a rank has its own error
    # Words that every healthy run prints too (NCCL's list of its socket interfaces): a cause only beside a rank that
    # failed, never read from a hang's lines alone (no rank's error in any stream).
    needs_a_failure: bool = False
    # What sets a match aside after all, given it and the text of every stream of the same failure (None: nothing does;
    # stale-extension-lock: a wait on torch's JIT lock beside the build it waits for, no lock left behind).
    aside_if: Callable[[re.Match, Iterable[str]], bool] | None = None

    def set_aside(self, m: re.Match, texts: Iterable[str], failed: bool = True) -> bool:
        """Whether this match is not the answer after all: `failed` False where no rank failed (a hang), `texts` the
        text of every stream of the failure."""
        return (self.needs_a_failure and not failed) or (self.aside_if is not None and self.aside_if(m, texts))

    @property
    def restart_can_help(self) -> bool:
        return self.retry


# The caret line Python 3.11+ prints under a traceback's source line (`    ~~~~^^^^`), where there is one: optional,
# its stretch bounded, read in linear time. Tables that read a source line, then the error, put it between them.
CARET_LINE = r"(?:[^\n^]{0,200}\^[\^~ \t]*\n)?"

# A traceback frame of the user's own file (not an installed package's): `File "...", line N, in NAME` and its newline.
OWN_FRAME = r"File \"(?![^\"\n]{0,300}(?:site|dist)-packages)[^\"\n]{1,300}\", line \d+, in [^\n]{1,200}\n"

# torch's broadcasting refusal where one side has size 0: a ZeRO-3 parameter's placeholder (empty until gathered).
SIZE_ZERO = (r"The size of tensor a \(0\) must match the size of tensor b \([1-9]\d*\)|"
             r"The size of tensor a \([1-9]\d*\) must match the size of tensor b \(0\)")


def sig(name: str, regex: str, cause: str, fix: str, retry: bool = True, symptom: bool = False,
        needs_a_failure: bool = False, aside_if: Callable[[re.Match, Iterable[str]], bool] | None = None) -> Signature:
    return Signature(name, re.compile(regex, re.IGNORECASE | re.MULTILINE), cause, fix, retry, symptom, needs_a_failure,
                     aside_if)


def then(first: str, later: str, gap: str = ".") -> str:
    """A regex for `first`, then `later` further on the same line, in linear time: `first.*later` tries every
    occurrence of `first` against the rest of the line (a line of `NET/IB NET/IB ...` costs its length
    squared); here each stretch of the line is scanned from the one `first` before it. `gap`: what may stand
    between them (a character class). Every signature's pattern is measured for this on its own words
    (tests/unit/test_explain_linear.py)."""
    return f"(?:{first})(?:(?!{first}){gap})*(?:{later})"

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

"""argparse types for numbers with a range. A value out of range is a usage error that argparse words as
"argument --flag: ..." (exit 2), before anything is read, written or started."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from dscluster.i18n import tr


def seconds(text: str) -> float:
    """A duration: finite and >= 0 (nan and inf would make every comparison with it false or true)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(tr("{v!r} is not a number of seconds", v=text)) from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(tr("{v!r}: give a finite number of seconds >= 0", v=text))
    return value


def positive_seconds(text: str) -> float:
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(tr("{v!r}: give a number of seconds > 0", v=text))
    return value


def count(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number in [minimum, maximum]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(tr("{v!r} is not a whole number", v=text)) from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = (tr("from {lo} to {hi}", lo=minimum, hi=maximum) if maximum is not None
                      else tr("{lo} or more", lo=minimum))
            raise argparse.ArgumentTypeError(tr("{v} is out of range: give {bounds}", v=value, bounds=bounds))
        return value

    parse.__name__ = "count"  # argparse names the type in its own "invalid <type> value" message
    return parse


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(tr("{v!r} is not a number", v=text)) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(tr("{v!r}: give a finite number > 0", v=text))
    return value


# Processes per machine: the hostfile's own bound on slots.
MAX_PROCS = 1024
PORT = count(1, 65535)

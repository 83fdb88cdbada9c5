"""Polling helper shared by the launch tests: a fault's effect shows up within a deadline, not at once."""

from __future__ import annotations

import time


def wait_for(pred, timeout: float, interval: float = 0.25):
    """pred()'s first truthy value within `timeout` seconds, else its value at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    return pred()

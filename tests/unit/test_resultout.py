"""resultout: while a command works, its stdout (Python's, descriptor 1, a child's) goes to stderr; the
result alone reaches the real stdout. Run in a child interpreter with real pipes."""

from __future__ import annotations

import subprocess
import sys

CHATTY = r"""
import logging, os, subprocess, sys
from dscluster.resultout import result_stdout
active = sys.argv[1] == "1"
with result_stdout(active) as out:
    print("python chatter")
    os.write(1, b"fd chatter\n")
    subprocess.run(["sh", "-c", "echo child chatter"])
    handler = logging.StreamHandler(sys.stdout)  # taken inside, as DeepSpeed's logger takes it on import
    log = logging.getLogger("lib"); log.addHandler(handler); log.warning("logger chatter")
    print("the-result", file=out)
log.warning("logger after")
print("after")
"""


def _run(active: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHATTY, active], capture_output=True, text=True, timeout=60)


def test_only_the_result_reaches_stdout_and_the_rest_goes_to_stderr():
    res = _run("1")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "the-result\nafter\n"
    for line in ("python chatter", "fd chatter", "child chatter", "logger chatter", "logger after"):
        assert line in res.stderr, res.stderr


def test_inactive_changes_nothing():
    res = _run("0")
    assert res.stdout.splitlines() == ["python chatter", "fd chatter", "child chatter", "logger chatter", "the-result",
                                       "logger after", "after"]

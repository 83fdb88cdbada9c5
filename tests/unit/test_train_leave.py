"""The reference trainer's ranks leave without Python's finalization (train/__main__.py's leave).

Why it matters: a rank whose run is over can still abort while Python finalizes (a gloo or NCCL thread
releasing ZeRO's tensors: "terminate called without an active exception", exit 134), which the supervisor
reads as exit-abort and does not restart: the README's own main job would end as a failure after it finished.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC}


def test_leave_keeps_the_exit_code_and_the_buffered_output_and_skips_finalization():
    script = ("import atexit, logging, sys\n"
              "atexit.register(lambda: print('finalized', flush=True))\n"
              "logging.basicConfig(stream=sys.stderr)\n"
              "logging.getLogger('t').warning('logged before leaving')\n"
              "from dscluster.train.__main__ import leave\n"
              "sys.stdout.write('written, not flushed')\n"
              "leave(7)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 7, done
    assert done.stdout == "written, not flushed", done  # flushed by leave, and no atexit handler ran
    assert "logged before leaving" in done.stderr, done


def test_the_entry_point_still_exits_with_mains_code():
    done = subprocess.run([sys.executable, "-m", "dscluster.train", "--steps", "0"], capture_output=True, text=True,
                          timeout=120, env=ENV)
    assert done.returncode == 3, done
    assert "--steps must be positive" in done.stderr and "fix:" in done.stderr, done

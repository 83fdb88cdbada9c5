"""sim/procs.terminate: the one way the simulations end their own processes (SIGTERM, grace, SIGKILL, reap)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from dscluster.sim.procs import alive, terminate


def _child(code: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_terminate_gives_a_grace_period_then_kills_and_reaps():
    polite = _child("import signal, sys, time; print('ready', flush=True); time.sleep(60)")
    stubborn = _child("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
                      "time.sleep(60)")
    t0 = time.monotonic()
    terminate([polite.pid, stubborn.pid, None], grace=1.0)
    took = time.monotonic() - t0
    assert not alive(polite.pid) and not alive(stubborn.pid)
    assert 0.9 <= took < 5, took  # the stubborn one used up the grace period, then SIGKILL
    # reaped: no zombie is left for this process to collect
    for proc in (polite, stubborn):
        try:
            assert os.waitpid(proc.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            pass


def test_terminate_without_grace_kills_at_once_and_never_signals_itself():
    proc = _child("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
                  "time.sleep(60)")
    t0 = time.monotonic()
    terminate([proc.pid, os.getpid()])
    assert not alive(proc.pid) and time.monotonic() - t0 < 3
    assert alive(os.getpid())

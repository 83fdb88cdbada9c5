"""A run's clean end costs no round trip to the nodes, and supervision stays whole: the watching part's
teardown after a runner that exited 0 (runs/supervising/watching.py `AttemptWatch.teardown(settled=True)`), with
real watchdogs on this machine (runs/supervising/watchdog.py through runs/supervising/channel.py, no ssh)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from dscluster.cluster.runner import LocalRunner
from dscluster.runs.supervising.channel import NodeChannel, close_all
from dscluster.runs.supervising.watching import AttemptWatch


def _wait(cond, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def _teardown(run_id: str, runner, chans, **kw) -> None:
    """The attempt's watch alone, torn down (attempt 1 of `run_id`; no backend hook, no remote reap)."""
    watch = AttemptWatch(chans, run_dir=Path("/nonexistent"), log_path=Path("/nonexistent/launcher.log"))
    watch.runner_started(runner, 0, len(chans))
    watch.teardown(run_id, 1, grace=1.0, **kw)
    watch._pinger.stop()


def _channels(watching: dict[str, str], waited: list[str]) -> list[NodeChannel]:
    """One real watchdog per "node", each watching the run id given (a node with nothing of the run watches an id
    nothing carries: this machine's /proc is every node's here); every wait for a "reaped" is noted."""
    chans = [NodeChannel(node, LocalRunner(), sys.executable, run, ping_timeout=60, attempt=1)
             for node, run in watching.items()]
    for ch in chans:
        ch.silent_for = lambda: 0.0  # all answering (a loaded machine may delay a heartbeat past 1 s)
        ch.wait_reaped = (lambda c: lambda timeout: waited.append(c.node) or NodeChannel.wait_reaped(c, timeout))(ch)
    return chans


def test_a_clean_end_waits_for_no_node_that_reported_nothing_left_and_still_reaps_one_that_did():
    run_id = f"cleanend-{os.getpid()}"
    # A process of the run left on the "busy" node (as a rank's orphan would be): its watchdog counts it.
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                              env={**os.environ, "DSCLUSTER_RUN_ID": run_id, "DSCLUSTER_ATTEMPT": "1"})
    runner = subprocess.Popen(["true"], start_new_session=True)  # DeepSpeed's runner, exited 0
    runner.wait()
    waited: list[str] = []
    chans = _channels({"clear": f"{run_id}-nothing", "busy": run_id}, waited)
    others = _channels({"a": f"{run_id}-nothing", "b": f"{run_id}-nothing"}, waited)
    try:
        assert _wait(lambda: all(ch.last_hb is not None for ch in chans + others) and chans[1].procs >= 1)
        assert chans[0].procs == 0
        _teardown(run_id, runner, chans, settled=True)
        assert waited == ["busy"]  # the node that reported nothing left is not waited for
        assert chans[1].reaped and chans[1].reaped.startswith("reaped 1"), chans[1].reaped  # its watchdog reaped
        assert _wait(lambda: orphan.poll() is not None, 10), "the busy node's process outlived the clean end"
        waited.clear()
        _teardown(run_id, runner, others)
        assert waited == ["a", "b"]  # any other teardown waits for every answering node, as before
    finally:
        orphan.kill()
        orphan.wait()
        close_all(chans + others, wait=False)  # hangs up only: the watchdogs exit on their own
        assert _wait(lambda: all(ch.proc.poll() is not None for ch in chans + others), 15)
        close_all(chans + others)  # the later close of the same channels (run()'s, once the end is recorded)

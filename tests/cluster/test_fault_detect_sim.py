"""Faults found by more than one signal (issue #46) on the simulated 3-node cluster, a real DeepSpeed script on
gloo: a partitioned node, a frozen node (every process SIGSTOPped) and a stopped rank (its peers hang in a
collective) are each torn down on every node and the next attempt runs on every node once healed; and a busy
machine (CPU load several times the core count, a shared disk kept busy with synchronous writes) tears down
no healthy run. Speed is benchmarks/fault_detect.py's: the waits here are a loaded machine's margins.

The run's processes are read from this machine's process table, which holds every simulated node's: each
carries DSCLUSTER_RUN_ID and DSCLUSTER_ATTEMPT in its environment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from polling import SimCli, run_masters, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="faults46")


@pytest.fixture(scope="module")
def cli(sim, env):
    return SimCli(sim, env, timeout=300)


def attempt_procs(run_id: str, attempt: int, *, ranks_only: bool = False) -> list[tuple[int, str]]:
    """(pid, state) of the run's live processes of one attempt, on every node."""
    needle, mark = f"DSCLUSTER_RUN_ID={run_id}".encode(), f"DSCLUSTER_ATTEMPT={attempt}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in env and mark in env and state != "Z" and (not ranks_only or any(e.startswith(b"RANK=")
                                                                                  for e in env)):
            found.append((int(entry), state))
    return found


def node_of(sim, pid: int) -> str | None:
    try:
        ns = os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
    return next((n for n in sim.nodes if os.readlink(f"/proc/{sim._node(n)['pid1']}/ns/pid") == ns), None)


def launch(cli: SimCli, name: str, *args: str, extra: dict[str, str] | None = None, script: tuple[str, ...] = ()) -> str:
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "--skip-doctor", "--name", name,
              "--restart-wait", "300", *args, SCRIPT, "--steps", "100000", "--sleep", "0.2", *script, extra=extra)
    assert res.returncode == 0, res.stdout + res.stderr
    return next(w for w in res.stdout.split() if w.startswith(name + "-"))


def rank_log(cli: SimCli, run_id: str, rank: int, attempt: int) -> str:
    """What a rank printed in one attempt: every attempt writes one log file per rank, named by its start."""
    files = sorted((store.run_path(cli.sim.spec.shared_dir, run_id) / "logs").glob(f"*_rank{rank}.log"))
    return files[attempt - 1].read_text(errors="replace") if len(files) >= attempt else ""


def running(cli: SimCli, run_id: str, attempt: int, timeout: float = 900) -> None:
    """Every node has a rank of this attempt, and every rank has trained three steps in it."""
    def ok():
        nodes = {node_of(cli.sim, p) for p, _ in attempt_procs(run_id, attempt, ranks_only=True)}
        return nodes >= set(cli.sim.nodes) and all(rank_log(cli, run_id, r, attempt).count("step ") >= 3
                                                    for r in range(len(cli.sim.nodes)))
    assert wait_for(ok, timeout, 0.5), cli("logs", run_id).stdout[-3000:]


def events(cli: SimCli, run_id: str) -> list[dict]:
    return store.read_events(store.run_path(cli.sim.spec.shared_dir, run_id))


def stop(cli: SimCli, run_id: str) -> None:
    cli("stop", run_id, "--cluster", str(cli.sim.spec_path))


def a_rank_on(sim, run_id: str, attempt: int, node: str) -> int:
    return next(p for p, _ in attempt_procs(run_id, attempt, ranks_only=True) if node_of(sim, p) == node)


def warm_servers(run_id: str, attempt: int) -> list[int]:
    """PIDs of the run's pre-warmed launch.py for `attempt` (launcher/warm.py) that have imported torch: named
    `dscluster-warm` then."""
    want, found = f"serve\0{run_id}\0{attempt}\0".encode(), []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if want not in f.read():
                    continue
            with open(f"/proc/{entry}/comm") as f:
                if f.read().strip() == "dscluster-warm":
                    found.append(int(entry))
        except OSError:
            continue
    return found


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


@pytest.mark.parametrize("fault", ["partition", "freeze"])
def test_a_lost_node_is_torn_down_everywhere_and_the_next_attempt_runs_once_healed(cli, sim, fault):
    # The next attempt's launchers pre-warmed as soon as the first one's ranks run (15 s by default).
    run_id = launch(cli, fault, "--max-restarts", "1", extra={"DSCLUSTER_WARM_AFTER": "0"})
    try:
        running(cli, run_id, 1)
        assert wait_for(lambda: len(warm_servers(run_id, 2)) == 3, 300, 0.5), warm_servers(run_id, 2)
        warmed = set(warm_servers(run_id, 2))
        # The attempt's sessions (watchdogs, pdsh's ssh) ride one ssh master per node of the run's own.
        before = run_masters(run_id)
        assert set(before) == set(sim.nodes), before
        getattr(sim, fault)("node2")
        try:
            # Every rank of attempt 1 gone (a frozen node's own stay stopped until it is continued).
            assert wait_for(lambda: not [p for p, st in attempt_procs(run_id, 1, ranks_only=True)
                                         if not (fault == "freeze" and st in "Tt")], 60, 0.2), \
                attempt_procs(run_id, 1)
            lost = next(e for e in events(cli, run_id) if e["event"] == "node-lost")
            assert lost["node"] == "node2" and "sshd does not answer" in lost["detail"], lost
        finally:
            sim.heal("node2")
        running(cli, run_id, 2)
        # Every node's attempt-2 rank was started by the launch.py warmed before the fault (the cut-off or
        # frozen node's own included), not by a cold one.
        assert {parent_of(p) for p, _ in attempt_procs(run_id, 2, ranks_only=True)} == warmed
        assert wait_for(lambda: not attempt_procs(run_id, 1), 60, 0.5), attempt_procs(run_id, 1)
        assert [e["why"] for e in events(cli, run_id) if e["event"] == "teardown"] == ["node-lost"]
        # The lost node's master was replaced (its connection may have died with the link); the others kept theirs.
        after = run_masters(run_id)
        assert {n: p for n, p in after.items() if n != "node2"} == {n: p for n, p in before.items() if n != "node2"}
        assert after.get("node2") not in (None, before["node2"]), (before, after)
    finally:
        stop(cli, run_id)
    assert wait_for(lambda: not run_masters(run_id), 30, 0.2), run_masters(run_id)  # they end with the run


def test_a_stopped_rank_hanging_its_peers_is_torn_down_and_restarted(cli, sim):
    run_id = launch(cli, "stopped", "--max-restarts", "1")
    try:
        running(cli, run_id, 1)
        rank = a_rank_on(sim, run_id, 1, "node1")
        os.kill(rank, signal.SIGSTOP)
        assert wait_for(lambda: not attempt_procs(run_id, 1, ranks_only=True), 60, 0.2), attempt_procs(run_id, 1)
        lost = next(e for e in events(cli, run_id) if e["event"] == "node-lost")
        assert lost["node"] == "node1" and "stopped (SIGSTOP" in lost["detail"], lost
        running(cli, run_id, 2)
    finally:
        stop(cli, run_id)


def test_a_collective_hung_by_a_live_rank_is_torn_down_everywhere_within_5s_and_restarted(cli, sim):
    # Rank 2 sleeps in Python between two steps (no SIGSTOP: every process runs); ranks 0 and 1 wait for it in
    # their next step's all-reduce. Only the ranks' own record of their collectives shows it (runs/supervising/hang.py).
    trigger = sim.spec.shared_dir / "hang-rank-2"
    run_id = launch(cli, "hung", "--max-restarts", "1", script=("--hang-file", str(trigger), "--hang-rank", "2"))
    try:
        running(cli, run_id, 1)
        trigger.write_text("")
        assert wait_for(lambda: "hanging at" in rank_log(cli, run_id, 2, 1), 120, 0.1), rank_log(cli, run_id, 2, 1)
        trigger.unlink()  # the next attempt runs on
        assert wait_for(lambda: not attempt_procs(run_id, 1, ranks_only=True), 60, 0.1), attempt_procs(run_id, 1)
        gone = time.time()
        hung_at = float(rank_log(cli, run_id, 2, 1).split("hanging at ")[1].split()[0])
        print(f"hung collective: torn down on every node {gone - hung_at:.2f}s after the hang")
        assert gone - hung_at <= 5.0, f"torn down {gone - hung_at:.2f}s after the hang"
        hung = next(e for e in events(cli, run_id) if e["event"] == "hung-collective")
        assert hung["node"] == "node2" and "rank 2 did nothing" in hung["detail"], hung
        running(cli, run_id, 2)
    finally:
        trigger.unlink(missing_ok=True)
        stop(cli, run_id)


def test_a_busy_machine_and_a_slow_shared_disk_tear_down_no_healthy_run(cli, sim):
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4 * (os.cpu_count() or 2))]
    disk = sim.spec.shared_dir / "busy-disk"
    writer = subprocess.Popen(["sh", "-c", f"while :; do dd if=/dev/zero of={disk} bs=64k count=256 oflag=sync "
                               "status=none; sync; done"])
    run_id = None
    try:
        run_id = launch(cli, "busy", "--max-restarts", "0")
        running(cli, run_id, 1)
        steps = rank_log(cli, run_id, 0, 1).count("step ")
        # 60 steps (0.2 s each at least) under the load: past the ping timeout (3 s) and the probe's pause (1 s).
        assert wait_for(lambda: rank_log(cli, run_id, 0, 1).count("step ") >= steps + 60, 300, 1.0)
        rec = store.read_record(store.run_path(sim.spec.shared_dir, run_id)).to_json()
        assert rec["status"] == "running" and len(rec["attempts"]) == 1, rec
        assert not [e for e in events(cli, run_id) if e["event"] in ("node-lost", "teardown", "rank-failed",
                                                                    "unreachable")], events(cli, run_id)
    finally:
        for p in (*burners, writer):
            p.kill()
            p.wait()
        disk.unlink(missing_ok=True)
        if run_id:
            stop(cli, run_id)

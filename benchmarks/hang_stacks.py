"""A hung rank on the simulated cluster: time from the stall detector firing to every rank's stack saved,
and `dscluster stacks RUN` on demand, beside the manual way (ssh to each node in turn, py-spy dump each
rank there) over the same ssh.

    sudo .venv/bin/python benchmarks/hang_stacks.py [--nodes 3] [--slots 1] [--repeat 3]

A user's own script (tests/data/hang_ds_script.py) hangs rank 2 in its data loading at step 3 while the
others wait in the gradient all-reduce; the launch has --stall-timeout 20 and no restarts. Needs root
(network namespaces, sshd). Prints one line per repeat and the medians; its own cluster name and home.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dscluster.runs.records import store
from dscluster.runs.supervising.nodes import node_links
from dscluster.runs.views.stacks import find_py_spy
from dscluster.sim import SimCluster, down

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
NAME = "ubenchhang"
STALL_S = 20


def _cli(env: dict, cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def _wait(pred, timeout: float, every: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(every)
    return None


def _events(run_dir: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def manual_dumps(record: dict, py_spy: str) -> float:
    """What a user does by hand: ssh to each node in turn and py-spy dump every rank of the script there."""
    links = node_links(record)
    started = time.perf_counter()
    for host, _ in record["launch"]["hosts"]:
        script = f"for p in $(pgrep -f hang_ds_script.py); do {py_spy} dump --nonblocking --pid $p; done"
        subprocess.run([*links[host], "sh", "-c", script], capture_output=True, timeout=120)
    return time.perf_counter() - started


def one(env: dict, work: Path, py_spy: str) -> dict:
    res = _cli(env, work, "launch", "--hostfile=hostfile", "--detach", "--max-restarts", "0", "--stall-timeout",
               str(STALL_S), "--skip-doctor", "hang_ds_script.py", "--hang-at", "3")
    if res.returncode != 0:
        raise SystemExit(f"launch failed: {res.stderr}")
    run_id = res.stdout.strip()
    run_dir = store.run_path(work, run_id)
    rank0 = lambda: "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank0.log"))  # noqa: E731
    if not _wait(lambda: "step 2 " in rank0(), 300):
        raise SystemExit(f"{run_id}: the ranks never reached step 2")
    time.sleep(2)  # rank 2 now sleeps in load_batch, the others wait in all_reduce
    t0 = time.perf_counter()
    on_demand = _cli(env, work, "stacks", run_id)
    demand_s = time.perf_counter() - t0
    grouped = "rank 2 on node2 in load_batch" in on_demand.stdout
    manual_s = manual_dumps(store.read_record(run_dir), py_spy)
    stacks = _wait(lambda: next((e for e in _events(run_dir) if e["event"] == "stacks"), None), STALL_S + 120)
    _wait(lambda: store.read_record(run_dir).get("status") in store.FINISHED, 120)
    if stacks is None:
        raise SystemExit(f"{run_id}: no stacks at the stall: {_events(run_dir)}")
    return {"run": run_id, "at_stall_s": stacks["seconds"], "odd_one_out": stacks.get("odd_one_out"),
            "on_demand_s": round(demand_s, 2), "grouped": grouped, "manual_s": round(manual_s, 2)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--slots", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces, sshd)", file=sys.stderr)
        return 6
    py_spy = find_py_spy()
    home = Path(tempfile.mkdtemp(prefix="dsc-bench-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    try:
        sim = SimCluster.up(NAME, args.nodes, home=home, slots=args.slots)
        work = Path(sim.spec.shared_dir)
        shutil.copy(DATA / "hang_ds_script.py", work / "hang_ds_script.py")
        (work / "hostfile").write_text("".join(f"{n.address} slots={args.slots}\n" for n in sim.spec.nodes))
        # This process reads the run's cluster too (the manual way's ssh): the same home as the CLI's.
        os.environ["DSCLUSTER_HOME"] = str(Path(sim.spec_path).parents[2])
        os.environ.pop("DSCLUSTER_CLUSTER", None)
        os.environ.pop("DSCLUSTER_SHARED", None)
        env = dict(os.environ)
        print(f"{args.nodes} simulated nodes x {args.slots} rank(s), stall timeout {STALL_S}s, py-spy {py_spy}")
        rows = []
        for _ in range(args.repeat):
            row = one(env, work, py_spy)
            rows.append(row)
            print(json.dumps(row), flush=True)
        med = {k: statistics.median(r[k] for r in rows) for k in ("at_stall_s", "on_demand_s", "manual_s")}
        print(f"median: stall detected -> stacks of {args.nodes * args.slots} ranks saved {med['at_stall_s']:.2f}s; "
              f"`dscluster stacks` {med['on_demand_s']:.2f}s (CLI start included); manual ssh + py-spy per node "
              f"{med['manual_s']:.2f}s (ratio {med['manual_s'] / med['at_stall_s']:.2f}x); odd one out named in "
              f"{sum(bool(r['odd_one_out']) for r in rows)}/{len(rows)}")
    finally:
        down(NAME, purge=True)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

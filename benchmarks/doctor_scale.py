#!/usr/bin/env python3
"""Doctor wall time vs node count on the simulated cluster (needs root: network namespaces).

    sudo .venv/bin/python benchmarks/doctor_scale.py            # 4, 16, 32 nodes, 3 runs each (~30 s)
    sudo .venv/bin/python benchmarks/doctor_scale.py --nodes 4 8 --runs 5

Target (issue 3): nearly flat in node count — 32 nodes within 2x of 4 nodes. Doctor sends one
probe per node, all in parallel, so its time is about one ssh round trip + the probe, not N of them.
Note: simulated nodes share this machine's cores, so 32 nodes means 32 concurrent sshd + python
start-ups on the same CPUs; a real cluster spreads that work over 32 machines.
The first run at each size opens the ssh ControlMaster connections (cold); later runs reuse them (warm).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time


def busy_cpu_s() -> float:
    """CPU seconds this machine spent not idle so far (all processes, all cores): the simulated nodes
    share the cores, so if doctor keeps them busy, wall time measures CPU, not waiting."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (doctor's threads and ssh clients):
    the controller's share. The rest of the machine's busy time is the nodes' side (sshd, probes)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[4, 16, 32])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--name", default="h3bench", help="simulated cluster name prefix (unique to this run)")
    parser.add_argument("--subnet", default="10.231.0.0/24", help="private subnet for the simulated nodes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("doctor_scale needs root (it starts a simulated cluster in network namespaces)", file=sys.stderr)
        return 2

    from dscluster.doctor import run_doctor
    from dscluster.sim import SimCluster

    # The node user must traverse the sim's home to reach the shared dir (root's home is 0700).
    home = tempfile.mkdtemp(prefix="dsc-doctor-scale-", dir="/var/tmp")
    os.chmod(home, 0o755)
    rows = []
    try:
        for n in args.nodes:
            rows.append(measure(n, args, home, SimCluster, run_doctor))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    report(rows, args)
    return 0


def measure(n, args, home, SimCluster, run_doctor) -> dict:
    """Start an n-node simulated cluster, run doctor `args.runs` times, take the cluster down."""
    t0 = time.perf_counter()
    sim = SimCluster.up(f"{args.name}{n}", n, subnet=args.subnet, home=home)
    up_s = time.perf_counter() - t0
    try:
        times, failures, cpu, ctl = [], [], [], []
        for _ in range(args.runs):
            before, own = busy_cpu_s(), own_cpu_s()
            report = run_doctor(sim.spec)
            cpu.append(busy_cpu_s() - before)
            ctl.append(own_cpu_s() - own)
            times.append(report.elapsed_s)
            failures = [f"{r.node}:{r.check}" for r in report.failures]
    finally:
        sim.down(purge=True)
    row = {"nodes": n, "sim_up_s": round(up_s, 2), "cold_s": round(times[0], 2),
           "warm_median_s": round(statistics.median(times[1:] or times), 2),
           "runs_s": [round(t, 2) for t in times], "failures": failures,
           "machine_cpu_s": round(statistics.median(cpu), 2), "cores": os.cpu_count(),
           "controller_cpu_s": round(statistics.median(ctl), 3)}
    print(f"{n:>3} nodes: doctor cold {row['cold_s']:.2f} s, warm median {row['warm_median_s']:.2f} s, "
          f"machine busy {row['machine_cpu_s']:.2f} CPU-s on {os.cpu_count()} cores "
          f"(runs {row['runs_s']}); failures: {len(row['failures'])} {row['failures'][:3]}", flush=True)
    return row


def report(rows, args) -> None:
    base = rows[0]["warm_median_s"]
    print()
    print(f"{'nodes':>5}  {'cold s':>7}  {'warm s':>7}  {'vs first':>8}  {'machine CPU-s':>13}  {'controller CPU-s':>16}")
    for r in rows:
        print(f"{r['nodes']:>5}  {r['cold_s']:>7.2f}  {r['warm_median_s']:>7.2f}  {r['warm_median_s'] / base:>7.2f}x"
              f"  {r['machine_cpu_s']:>13.2f}  {r['controller_cpu_s']:>16.3f}")
    print("machine CPU-s counts every process on this host (other users' too); 2 cores give at most 2 CPU-s per "
          "second, so a wall time near machine CPU-s / 2 means the simulated nodes were waiting for the CPUs.")
    if len(rows) > 1:
        ratio = rows[-1]["warm_median_s"] / base
        verdict = "within" if ratio <= 2 else "NOT within"
        print(f"{rows[-1]['nodes']} nodes / {rows[0]['nodes']} nodes = {ratio:.2f}x ({verdict} the 2x target)")
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())

"""How dscluster's cluster operations grow with the node count, on the simulated cluster (issue #36).

    sudo .venv/bin/python benchmarks/cluster_scale.py [4 8 16 32] [--repeat 2]

For each size N (one simulated cluster of N nodes, one tiny rank per node: benchmarks/tiny_rank.py, no torch, so
32 nodes fit in memory), the wall time of:
  sim up          `SimCluster.up` until ssh works to every node
  doctor          `dscluster doctor` (every check, every node, in parallel)
  launch          `dscluster launch` (its doctor pre-flight included) -> every rank has started
  launch --skip-doctor   the same without the pre-flight
  plain deepspeed `deepspeed --hostfile H` (pdsh, the same script) -> every rank has started
  teardown        a rank SIGKILLed on the last node -> no process of the run left on any node
  stop            `dscluster stop RUN` -> the command returned / no process of the run left on any node
"No process left" is read from this machine's process table, which holds every simulated node's processes (each
node is a PID namespace below it): the run's processes carry DSCLUSTER_RUN_ID, the nodes' watchdogs name the run
on their command line. Medians of --repeat, each figure also given one by one. Needs root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "tiny_rank.py"
PY = sys.executable


def run_processes(run_id: str) -> list[int]:
    """Every process of the run on every simulated node: DSCLUSTER_RUN_ID in its environment, or the run id on
    its command line (a node's watchdog)."""
    from dscluster.runs.supervising.reaper import run_pids

    found = set(run_pids(run_id))
    needle = run_id.encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if needle in cmdline and b"dscluster.cli" not in cmdline:  # not the `dscluster stop RUN` itself
                found.add(int(entry))
    return sorted(found)


def wait_until(cond, timeout: float, every: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(every)
    return cond()


class Bench:
    def __init__(self, sim, env: dict[str, str]):
        self.sim, self.env, self.cwd = sim, env, str(sim.spec.shared_dir)
        self.n = len(sim.nodes)

    def cli(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([PY, "-m", "dscluster.cli", *args], env=self.env, cwd=self.cwd, capture_output=True,
                              text=True, timeout=timeout)

    def started(self, logs: Path) -> bool:
        count = 0
        for p in logs.glob("*_rank*.log"):
            try:
                count += " started on " in p.read_text(errors="replace")
            except OSError:
                pass
        return count >= self.n

    def launch(self, *extra: str) -> tuple[float, str]:
        t0 = time.monotonic()
        res = self.cli("launch", "--cluster", str(self.sim.spec_path), "--detach", "--max-restarts", "0",
                       "--name", "scale", *extra, str(SCRIPT), "--seconds", "900")
        if res.returncode != 0:
            raise RuntimeError(res.stdout + res.stderr)
        run_id = next(w for w in res.stdout.split() if w.startswith("scale-"))
        logs = Path(self.cwd) / "runs" / run_id / "logs"
        if not wait_until(lambda: self.started(logs), 600, 0.05):
            raise RuntimeError(f"{run_id}: not every rank started")
        return time.monotonic() - t0, run_id

    def stop(self, run_id: str) -> tuple[float, float]:
        t0 = time.monotonic()
        res = self.cli("stop", run_id, "--cluster", str(self.sim.spec_path))
        returned = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(res.stdout + res.stderr)
        wait_until(lambda: not run_processes(run_id), 120)
        return returned, time.monotonic() - t0

    def teardown_after_kill(self, run_id: str) -> float:
        last = self.sim.nodes[-1]
        listing = self.sim.exec(last, ["sh", "-c", "for p in $(" + f"{PY} -m dscluster.runs.supervising.reaper {run_id} --list" +
                                       "); do echo $p $(tr '\\0' ' ' < /proc/$p/cmdline); done"]).stdout
        rank = next(int(line.split()[0]) for line in listing.splitlines()
                    if "tiny_rank.py" in line and "deepspeed.launcher" not in line and "masklog" not in line)
        t0 = time.monotonic()
        self.sim.exec(last, ["kill", "-9", str(rank)])
        wait_until(lambda: not run_processes(run_id), 120)
        return time.monotonic() - t0

    def plain(self) -> float:
        from dscluster.cluster.pdsh import pdsh_env

        work = Path(tempfile.mkdtemp(dir=self.cwd, prefix="plain-"))
        os.chmod(work, 0o755)
        marker = f"plain-{os.getpid()}-{time.monotonic_ns()}"
        (work / "hostfile").write_text(self.sim.spec.hostfile_text())
        (work / ".deepspeed_env").write_text(f"PATH={Path(PY).parent}:/usr/local/bin:/usr/bin:/bin\n"
                                             f"DSCLUSTER_RUN_ID={marker}\n")
        env = {**os.environ, **pdsh_env(self.sim.spec), "DSCLUSTER_RUN_ID": marker}
        t0 = time.monotonic()
        proc = subprocess.Popen([PY, "-u", "-m", "deepspeed.launcher.runner", "--hostfile", str(work / "hostfile"),
                                 "--master_addr", self.sim.spec.nodes[0].name, "--master_port", "29513",
                                 str(SCRIPT), "--seconds", "900"], cwd=work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        seen, elapsed = 0, None
        assert proc.stdout is not None
        for line in proc.stdout:
            seen += " started on " in line
            if seen >= self.n:
                elapsed = time.monotonic() - t0
                break
        os.killpg(proc.pid, 9)
        proc.wait()
        for node in self.sim.nodes:  # the plain recipe leaves its ranks behind: clean them up here
            self.sim.exec(node, [PY, "-m", "dscluster.runs.supervising.reaper", marker, "--grace=0.5"], timeout=30)
        shutil.rmtree(work, ignore_errors=True)
        if elapsed is None:
            raise RuntimeError("the plain deepspeed run never started every rank")
        return elapsed


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f}" + (f"  ({', '.join(f'{v:.2f}' for v in values)})"
                                                   if len(values) > 1 else "")


def measure(n: int, repeat: int, home: Path) -> dict[str, list[float]]:
    from dscluster.sim import SimCluster, down

    name = f"scale{os.environ.get('DSCLUSTER_SIM_SALT', '')}"[:20]
    env = {**os.environ, "DSCLUSTER_HOME": str(home)}
    figures: dict[str, list[float]] = {k: [] for k in ("sim up", "doctor", "launch", "launch --skip-doctor",
                                                         "plain deepspeed", "teardown", "stop (returned)",
                                                         "stop (all gone)")}
    t0 = time.monotonic()
    sim = SimCluster.up(name, n, home=home)
    figures["sim up"].append(time.monotonic() - t0)
    try:
        b = Bench(sim, env)
        b.cli("doctor", "--cluster", str(sim.spec_path))  # warm: the first one pins host keys
        for _ in range(repeat):
            t0 = time.monotonic()
            b.cli("doctor", "--cluster", str(sim.spec_path))
            figures["doctor"].append(time.monotonic() - t0)
            figures["plain deepspeed"].append(b.plain())
            t, run_id = b.launch()
            figures["launch"].append(t)
            returned, gone = b.stop(run_id)
            figures["stop (returned)"].append(returned)
            figures["stop (all gone)"].append(gone)
            t, run_id = b.launch("--skip-doctor")
            figures["launch --skip-doctor"].append(t)
            figures["teardown"].append(b.teardown_after_kill(run_id))
            left = run_processes(run_id)
            if left:
                raise RuntimeError(f"{run_id}: processes left after the teardown: {left}")
    finally:
        down(name, purge=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[4, 8, 16, 32])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="dsc-scale-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    results = {}
    try:
        for n in args.sizes:
            results[n] = measure(n, args.repeat, home)
            print(f"\n{n} nodes:", flush=True)
            for k, v in results[n].items():
                print(f"  {k:<22} {shown(v)} s", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"\ncluster_scale.py: simulated nodes x 1 tiny rank, medians of {args.repeat} (s), {os.cpu_count()} cores "
          "shared")
    keys = list(next(iter(results.values()))) if results else []
    print("| | " + " | ".join(str(n) for n in results) + " |")
    print("|---|" + "---|" * len(results))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{statistics.median(results[n][k]):.2f}" for n in results) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

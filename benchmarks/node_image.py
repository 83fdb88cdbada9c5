"""The node image: build time and size per flavor; `dscluster up`/`down` wall time on simulated bare hosts.

    sudo .venv/bin/python benchmarks/node_image.py [--build] [--launch] [3 8]

--build forces `dscluster image build --flavor cpu --engine podman --force` (the engine's layer cache
still applies; for a build from nothing, `podman rmi` the image and `podman builder prune`/`podman
image prune -a` first) and prints its time and size; without it, the size of the image already there.
Then, per host count: `up` (preflight, key publication, containers started, every node's sshd
listening) and `down` (containers and the master's key copy removed), with the sim hosts' own
creation time beside them as the peer figure (`up ÷ sim`). The cuda flavor cannot be built here
(its base cannot be pulled). Needs root, podman, runc, mmdebstrap.

--launch: command -> first training step of the same user script (tests/data/min_ds_script.py, 3 ranks,
gloo), `dscluster launch` from this machine into the node containers on 3 simulated hosts (the spec
that `up` used, its recorded python) next to the same launch on 3 bare simulated nodes (`dscluster sim
up`, the ranks run this machine's interpreter), alternating, both in this one run: the ratio is the
containers' cost (podman exec-less: the ranks start through each container's own sshd).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMAGE = "dscluster-node:0.1.0-cpu"
NAME = "imbench"
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "data" / "min_ds_script.py"


def cli(*args: str, env: dict, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=1800)


def checked(res: subprocess.CompletedProcess) -> str:
    if res.returncode != 0:
        raise SystemExit(f"failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res.stdout


def first_step(spec: str, work: Path, env: dict, repeat: int) -> list[float]:
    """Seconds from `dscluster launch --detach` to the first `step 0 ` line in rank 0's log."""
    from dscluster.runs.records import store

    times = []
    for i in range(repeat):
        t0 = time.perf_counter()
        out = checked(cli("launch", "--cluster", spec, "--detach", "--max-restarts", "0", "--name", f"fs{i}",
                          str(work / SCRIPT.name), "--steps", "3", env=env, cwd=str(work)))
        run_dir = store.run_path(work.parent, out.strip().splitlines()[-1].strip())
        deadline = time.monotonic() + 300
        while not any("step 0 " in p.read_text(errors="replace") for p in (run_dir / "logs").glob("*_rank0.log")):
            if time.monotonic() > deadline:
                raise SystemExit(f"no first step in {run_dir}")
            time.sleep(0.05)
        times.append(time.perf_counter() - t0)
        while store.read_record(run_dir)["status"] not in store.FINISHED:  # the next launch finds free ports
            time.sleep(0.2)
    return times


def launch_ratio(base: Path, env: dict, repeat: int = 2) -> None:
    """Containers (the node image on simulated hosts) vs bare simulated nodes, alternating."""
    from dscluster.sim import SimCluster
    from dscluster.sim.hosts import BareHosts

    hosts = BareHosts.up(NAME, 3, base=base / "launch")
    sim = None
    try:
        env = {**env, "DSCLUSTER_HOST_SSH_CONFIG": str(hosts.ssh_config)}
        spec = str(hosts.base / "dscluster.toml")
        nodes = [a for addr in hosts.addresses for a in ("--node", f"{addr}:1")]
        checked(cli("init", "--name", NAME, *nodes, "--shared", str(hosts.shared_dir), "--user", "dscluster",
                    "--output", spec, "--force", env=env, cwd=str(hosts.base)))
        checked(cli("up", "--cluster", spec, "--image", IMAGE, "--gpus", "none", "--shm-size", "1g",
                    "--ulimit", "none", "--wait", "120", env=env, cwd=str(hosts.base)))
        checked(cli("config", "trust", "--all", "--cluster", spec, env=env, cwd=str(hosts.base)))
        work = hosts.shared_dir / "work"
        work.mkdir(exist_ok=True)
        shutil.copy(SCRIPT, work / SCRIPT.name)
        os.chown(work, 10001, 10001)
        sim = SimCluster.up(f"{NAME}s", 3, home=base / "simhome")
        sim_work = Path(sim.spec.shared_dir) / "work"
        sim_work.mkdir(exist_ok=True)
        os.chmod(sim_work, 0o777)
        shutil.copy(SCRIPT, sim_work / SCRIPT.name)
        sim_env = {**env, "DSCLUSTER_HOME": str(base / "simhome")}
        first_step(str(sim.spec_path), sim_work, sim_env, 1)  # warm-up: page cache, JIT ops of the bare nodes
        first_step(spec, work, env, 1)
        bare, boxed = [], []
        for _ in range(repeat):
            bare += first_step(str(sim.spec_path), sim_work, sim_env, 1)
            boxed += first_step(spec, work, env, 1)
        print(f"launch -> first step, bare simulated nodes (s): {', '.join(f'{t:.1f}' for t in bare)}")
        print(f"launch -> first step, node containers (s):      {', '.join(f'{t:.1f}' for t in boxed)}")
        print(f"ratio containers / bare: median {statistics.median(boxed) / statistics.median(bare):.2f}, "
              f"min {min(boxed) / min(bare):.2f}", flush=True)
        checked(cli("down", "--cluster", spec, "--purge", env=env, cwd=str(hosts.base)))
    finally:
        if sim is not None:
            sim.down(purge=True)
        hosts.down()


def main(argv: list[str]) -> int:
    if os.geteuid() != 0:
        print("needs root (network namespaces, podman)", file=sys.stderr)
        return 6
    from dscluster.sim.hosts import BareHosts

    build = "--build" in argv
    launch = "--launch" in argv
    sizes = [int(a) for a in argv if a.isdigit()] or [3, 8]
    base = Path(tempfile.mkdtemp(prefix="dsc-imbench-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    env = {**os.environ, "DSCLUSTER_HOME": str(base / "home"), "DSCLUSTER_ENGINE": "podman"}
    try:
        if build:
            started = time.perf_counter()
            out = checked(cli("image", "build", "--flavor", "cpu", "--engine", "podman", "--tag", IMAGE, "--force",
                              env=env, cwd=str(base)))
            print(f"build cpu (podman): {time.perf_counter() - started:.0f} s")
            print(out.strip())
        size = subprocess.run(["podman", "image", "inspect", "--format", "{{.Size}}", IMAGE], capture_output=True,
                              text=True).stdout.strip()
        print(f"image {IMAGE}: {int(size or 0) / 1e9:.2f} GB")
        print(f"{'hosts':>5}  {'sim (s)':>7}  {'up (s)':>7}  {'down (s)':>8}  {'up / sim':>8}")
        for n in sizes:
            started = time.perf_counter()
            hosts = BareHosts.up(NAME, n, base=base / f"h{n}")
            sim_s = time.perf_counter() - started
            env["DSCLUSTER_HOST_SSH_CONFIG"] = str(hosts.ssh_config)
            spec = str(hosts.base / "dscluster.toml")
            nodes = [a for addr in hosts.addresses for a in ("--node", f"{addr}:1")]
            checked(cli("init", "--name", NAME, *nodes, "--shared", str(hosts.shared_dir), "--user", "dscluster",
                        "--output", spec, "--force", env=env, cwd=str(hosts.base)))
            started = time.perf_counter()
            checked(cli("up", "--cluster", spec, "--image", IMAGE, "--gpus", "none", "--shm-size", "1g",
                        "--ulimit", "none", "--wait", "120", env=env, cwd=str(hosts.base)))
            up_s = time.perf_counter() - started
            started = time.perf_counter()
            checked(cli("down", "--cluster", spec, "--purge", env=env, cwd=str(hosts.base)))
            down_s = time.perf_counter() - started
            hosts.down()
            print(f"{n:>5}  {sim_s:>7.2f}  {up_s:>7.2f}  {down_s:>8.2f}  {up_s / sim_s:>8.0f}", flush=True)
        if launch:
            launch_ratio(base, env)
    finally:
        try:
            BareHosts.attach(NAME).down()
        except Exception:  # noqa: BLE001 - nothing left is fine
            pass
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

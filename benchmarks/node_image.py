"""The node image: build time and size per flavor; `dscluster up`/`down` wall time on simulated bare hosts.

    sudo .venv/bin/python benchmarks/node_image.py [--build] [3 8]

--build forces `dscluster image build --flavor cpu --engine podman --force` (the engine's layer cache
still applies; for a build from nothing, `podman rmi` the image and `podman builder prune`/`podman
image prune -a` first) and prints its time and size; without it, the size of the image already there.
Then, per host count: `up` (preflight, key publication, containers started, every node's sshd
listening) and `down` (containers and the master's key copy removed), with the sim hosts' own
creation time beside them as the peer figure (`up ÷ sim`). The cuda flavor cannot be built here
(its base cannot be pulled). Needs root, podman, runc, mmdebstrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMAGE = "dscluster-node:0.1.0-cpu"
NAME = "imbench"


def cli(*args: str, env: dict, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=1800)


def checked(res: subprocess.CompletedProcess) -> str:
    if res.returncode != 0:
        raise SystemExit(f"failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res.stdout


def main(argv: list[str]) -> int:
    if os.geteuid() != 0:
        print("needs root (network namespaces, podman)", file=sys.stderr)
        return 6
    from dscluster.sim.hosts import BareHosts

    build = "--build" in argv
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
    finally:
        try:
            BareHosts.attach(NAME).down()
        except Exception:  # noqa: BLE001 - nothing left is fine
            pass
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

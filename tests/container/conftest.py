"""Fixtures for the node image tests: the image built once per session, simulated bare hosts.

`node_image` builds docker/Dockerfile's cpu flavor with `dscluster image build --flavor cpu --engine
podman`, exactly as a user does. The image is labelled with the hash of its inputs and the build is
skipped when the label matches, so a session (or a CI run on a machine that kept podman's store)
rebuilds only when the Dockerfile, the package's source or the torch wheel changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

IMAGE = "dscluster-node:0.1.0-cpu"
ENGINE = "podman"


def _need() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, sshd, a rootful container engine)"
    for tool in (ENGINE, "runc", "mmdebstrap", "nsenter"):
        if shutil.which(tool) is None:
            return f"needs {tool} (scripts/setup.sh test installs it)"
    return None


@pytest.fixture(scope="session")
def node_image(tmp_path_factory) -> str:
    reason = _need()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "DSCLUSTER_HOME": str(tmp_path_factory.mktemp("image-home"))}
    res = subprocess.run([sys.executable, "-m", "dscluster.cli", "image", "build", "--flavor", "cpu", "--engine", ENGINE,
                          "--tag", IMAGE], env=env, capture_output=True, text=True, timeout=1800)
    log = Path(env["DSCLUSTER_HOME"]) / "logs" / "image-build-cpu.log"
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    assert res.returncode == 0, res.stdout + res.stderr + tail
    print(res.stdout)
    return IMAGE


@pytest.fixture(scope="module")
def bare_hosts(request):
    """`bare_hosts(n, name)`: simulated bare hosts, removed (with whatever is left in them) afterwards."""
    reason = _need()
    if reason:
        pytest.skip(reason)
    from dscluster.sim.hosts import BareHosts

    made: list[BareHosts] = []
    names: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="dsc-hosts-", dir="/var/tmp"))
    os.chmod(base, 0o755)

    def factory(n: int, name: str) -> BareHosts:
        names.append(name)
        hosts = BareHosts.up(name, n, base=base / name)
        made.append(hosts)
        return hosts

    try:
        yield factory
    finally:
        for name in names:
            subprocess.run([ENGINE, "rm", "--force", f"dscluster-{name}"], capture_output=True, timeout=120)
            for volume in (f"dscluster-{name}-node", f"dscluster-{name}-identity"):
                subprocess.run([ENGINE, "volume", "rm", "--force", volume], capture_output=True, timeout=60)
            try:
                BareHosts.attach(name).down()
            except Exception as err:  # noqa: BLE001 - keep tearing down the others
                print(f"bare_hosts: down({name}) failed: {err}")
        shutil.rmtree(base, ignore_errors=True)

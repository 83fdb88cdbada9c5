"""Fixtures for the node image tests: the image built once per session, simulated bare hosts.

`node_image` builds docker/Dockerfile's cpu flavor with `dscluster image build --flavor cpu --engine
podman`, exactly as a user does; `docker_node_image` the same with `--engine docker`, on a dockerd that
the fixture starts when none answers (and stops again, by its PID). The image is labelled with the hash of its inputs and the build is
skipped when the label matches, so a session (or a CI run on a machine that kept podman's store)
rebuilds only when the Dockerfile, the package's source or the torch wheel changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from support import run_cli

IMAGE = "dscluster-node:0.1.0-cpu"
ENGINE = "podman"


def _need(engine: str = ENGINE) -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, sshd, a rootful container engine)"
    tools = (engine, "runc", "mmdebstrap", "nsenter") + (("dockerd",) if engine == "docker" else ())
    for tool in tools:
        if shutil.which(tool) is None:
            return f"needs {tool} (scripts/setup.sh test installs it)"
    return None


def build_image(engine: str, home: Path, env: dict | None = None) -> str:
    """`dscluster image build --flavor cpu --engine ENGINE`, as a user runs it; skipped by the command
    itself when an image with the same inputs hash is there."""
    env = {**os.environ, **(env or {}), "DSCLUSTER_HOME": str(home)}
    res = run_cli("image", "build", "--flavor", "cpu", "--engine", engine, "--tag", IMAGE, env=env, timeout=1800)
    log = home / "logs" / "image-build-cpu.log"
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    assert res.returncode == 0, res.stdout + res.stderr + tail
    print(res.stdout)
    return IMAGE


@pytest.fixture(scope="session")
def podman_ready() -> str:
    """podman and what the builds need (root, runc, mmdebstrap), or the test is skipped with the reason."""
    reason = _need()
    if reason:
        pytest.skip(reason)
    return ENGINE


@pytest.fixture(scope="session")
def node_image(tmp_path_factory) -> str:
    reason = _need()
    if reason:
        pytest.skip(reason)
    return build_image(ENGINE, tmp_path_factory.mktemp("image-home"))


def _docker_answers(env: dict) -> bool:
    return subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], env=env, capture_output=True,
                          timeout=30).returncode == 0


def _docker_client_env() -> dict:
    """A docker client that builds with BuildKit: a Docker 23+ client does so only through its buildx
    plugin; where that is missing but docker.io's own client (BuildKit built in) is in /usr/bin, that one
    comes first on PATH. What `dscluster image build` tells a user in the same case."""
    env = dict(os.environ)
    if subprocess.run(["docker", "buildx", "version"], capture_output=True).returncode != 0 and \
            shutil.which("docker", path="/usr/bin"):
        env["PATH"] = "/usr/bin:" + env.get("PATH", "")
    return env


@pytest.fixture(scope="session")
def docker_engine(tmp_path_factory):
    """This machine's Docker daemon (the controller's, where images are built): the running one, or one
    started here with its defaults (overlay2, the cgroupfs driver: no systemd) and stopped at the end."""
    reason = _need("docker")
    if reason:
        pytest.skip(reason)
    env = _docker_client_env()
    proc = None
    if not _docker_answers(env):
        log = open(tmp_path_factory.mktemp("dockerd") / "dockerd.log", "wb")  # noqa: SIM115 - the daemon keeps it
        proc = subprocess.Popen(["dockerd", "--storage-driver", "overlay2", "--exec-opt", "native.cgroupdriver=cgroupfs"],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not _docker_answers(env) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        assert _docker_answers(env), Path(log.name).read_text(errors="replace")[-2000:]
    try:
        yield env
    finally:
        if proc is not None:
            from dscluster.sim.procs import terminate

            terminate([proc.pid], grace=30.0)


@pytest.fixture(scope="session")
def docker_node_image(docker_engine, tmp_path_factory) -> str:
    return build_image("docker", tmp_path_factory.mktemp("docker-image-home"), docker_engine)


@pytest.fixture(scope="module")
def bare_hosts(request):
    """`bare_hosts(n, name, engine="podman")`: simulated bare hosts, removed (with whatever is left in
    them, their dockerd too) afterwards."""
    reason = _need()
    if reason:
        pytest.skip(reason)
    from dscluster.sim.hosts import BareHosts

    made: list[BareHosts] = []
    names: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="dsc-hosts-", dir="/var/tmp"))
    os.chmod(base, 0o755)

    def factory(n: int, name: str, engine: str = ENGINE) -> BareHosts:
        names.append(name)
        hosts = BareHosts.up(name, n, base=base / name, engine=engine)
        made.append(hosts)
        return hosts

    try:
        yield factory
    finally:
        for name in names:
            subprocess.run([ENGINE, "rm", "--force", f"dscluster-{name}"], capture_output=True, timeout=120)
            for volume in (f"dscluster-{name}-node", f"dscluster-{name}-identity"):
                subprocess.run([ENGINE, "volume", "rm", "--force", volume], capture_output=True, timeout=60)
            if not BareHosts.runtime_file(name).exists():
                continue  # the test took them down itself
            try:
                BareHosts.attach(name).down()
            except Exception as err:  # noqa: BLE001 - keep tearing down the others
                print(f"bare_hosts: down({name}) failed: {err}")
        shutil.rmtree(base, ignore_errors=True)

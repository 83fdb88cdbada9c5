"""What the node image promises, read from docker/ (the Docker engine itself does not run in CI).

The entrypoint's behaviour is tested natively elsewhere (node agent and lab tests); here: the pins,
the prebuilt DeepSpeed ops, the entrypoint and healthcheck wiring, and the build-context allow-list.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from dscluster.deploy.policy import parse

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
INSTRS = parse((DOCKER / "Dockerfile").read_text())


def _all(keyword: str) -> list[str]:
    return [i.args for i in INSTRS if i.keyword == keyword]


def test_base_is_a_cuda_devel_image_pinned_by_digest():
    # One FROM for both flavors: the cuda default is the ARG BASE before it; cpu passes another BASE.
    assert _all("FROM") == ["${BASE}"]
    (arg,) = [a for a in _all("ARG") if a.startswith("BASE=")]
    base = arg.split("=", 1)[1]
    assert re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-cudnn-devel-ubuntu\d\d\.04@sha256:[0-9a-f]{64}", base), base
    labels = " ".join(_all("LABEL"))
    assert base.split("@")[1] in labels and "org.opencontainers.image.base.name" in labels


def test_oci_labels():
    labels = " ".join(_all("LABEL"))
    for key in ("title", "description", "version", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels


def test_every_pip_package_is_pinned():
    for run in _all("RUN"):
        for command in re.split(r"&&|;", run):
            if "pip install" not in command:
                continue
            words = [w.strip("\"'") for w in command.split("pip install", 1)[1].split()]
            packages = [w for w in words if not w.startswith("-") and not w.startswith("http")
                        and not w.startswith("/")]
            for pkg in packages:
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.+]+", pkg), f"unpinned: {pkg} in {command}"


def test_deepspeed_ops_are_prebuilt_for_the_common_architectures():
    ds_run = next(r for r in _all("RUN") if "deepspeed==" in r)
    for op in ("DS_BUILD_FUSED_ADAM=1", "DS_BUILD_CPU_ADAM=1"):
        assert op in ds_run
    (arch,) = [a for a in _all("ARG") if a.startswith("TORCH_CUDA_ARCH_LIST")]
    archs = arch.split("=", 1)[1].strip('"').split(";")
    assert archs == ["8.0", "8.6", "8.9", "9.0"]  # never "9.0a": DeepSpeed's op builder crashes on it
    assert "--no-build-isolation" in ds_run  # the ops compile against the torch already installed


def test_entrypoint_healthcheck_and_user():
    assert json.loads(_all("ENTRYPOINT")[-1]) == ["dscluster", "node", "start"]
    (health,) = _all("HEALTHCHECK")
    assert "dscluster-healthcheck" in health and "--interval" in health
    user_run = next(r for r in _all("RUN") if "useradd" in r)
    assert "--uid" in user_run and "-p '*'" in user_run
    uid = next(a for a in _all("ARG") if a.startswith("NODE_UID="))
    assert int(uid.split("=")[1]) >= 1000
    assert _all("USER")[-1] == "${NODE_USER}"


def test_no_baked_host_keys_and_hardened_system_sshd():
    apt_run = next(r for r in _all("RUN") if "openssh-server" in r)
    assert "rm -f /etc/ssh/ssh_host_*" in apt_run
    assert "PermitRootLogin no" in apt_run and "PasswordAuthentication no" in apt_run
    for tool in ("pdsh", "openmpi-bin", "openssh-client"):
        assert tool in apt_run


def test_recipe_jupyterlab_set_is_installed():
    pip_runs = " ".join(r for r in _all("RUN") if "pip install" in r)
    for pkg in ("jupyterlab==", "jupyter-server-proxy==", "jupyter-resource-usage==", "ipywidgets==",
                "jupyterlab-language-pack-zh-TW==", "deepspeed==", "torch=="):
        assert pkg in pip_runs, pkg
    assert "/tmp/dscluster-src[jupyter" in pip_runs


def test_build_context_is_an_allow_list():
    lines = [ln.strip() for ln in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "*"
    allowed = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    assert {"pyproject.toml", "README.md", "src", "docker/healthcheck.sh"} <= allowed
    assert not allowed & {".venv", ".git", "tests", "benchmarks", "docker"}
    # Everything the Dockerfile COPYs from the context exists and is allowed in; nothing is copied whole.
    for copy in _all("COPY"):
        *sources, _dest = copy.split()
        assert "." not in sources and "./" not in sources, copy
        for src in sources:
            assert (ROOT / src).exists(), src
            assert src.rstrip("/") in allowed or src.split("/")[0] in allowed, src


# --- the healthcheck script, run for real ------------------------------------------------------------

def _health(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(DOCKER / "healthcheck.sh")], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=30)


@pytest.fixture
def listening_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_healthcheck_follows_the_sshd_port(tmp_path, listening_port):
    env = {"DSCLUSTER_HOME": str(tmp_path)}
    assert _health({**env, "DSCLUSTER_SSH_PORT": str(listening_port)}).returncode == 0
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    result = _health({**env, "DSCLUSTER_SSH_PORT": str(closed)})
    assert result.returncode == 1 and str(closed) in result.stdout


def test_healthcheck_fails_when_the_recorded_lab_is_gone(tmp_path, listening_port):
    lab_state = tmp_path / "lab" / socket.gethostname()
    lab_state.mkdir(parents=True)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = free.getsockname()[1]
    (lab_state / "lab.json").write_text(json.dumps({"ip": "127.0.0.1", "port": dead}))
    result = _health({"DSCLUSTER_HOME": str(tmp_path), "DSCLUSTER_SSH_PORT": str(listening_port),
                      "PATH": f"{Path(os.sys.executable).parent}:{os.environ['PATH']}"})
    assert result.returncode == 1 and "JupyterLab" in result.stdout


def test_verify_ops_script_builds_exactly_what_the_image_builds():
    ds_run = next(r for r in _all("RUN") if "deepspeed==" in r)
    cuda_branch = ds_run.split('"${FLAVOR}" = cuda ]; then', 1)[1].split(" else ", 1)[0]
    image_flags = set(re.findall(r"DS_BUILD_\w+=1", cuda_branch))
    script = (DOCKER / "verify_ops.sh").read_text()
    script_flags = set(re.findall(r"DS_BUILD_\w+=1", script)) | (
        {"DS_BUILD_AIO=1"} if "DS_BUILD_AIO=$aio" in script else set())
    assert image_flags == script_flags
    (arch,) = [a for a in _all("ARG") if a.startswith("TORCH_CUDA_ARCH_LIST")]
    assert f'TORCH_CUDA_ARCH_LIST={arch.split("=", 1)[1]}' in script
    assert "deepspeed==0.19.8" in ds_run and "deepspeed==0.19.8" in script
    assert subprocess.run(["bash", "-n", str(DOCKER / "verify_ops.sh")]).returncode == 0

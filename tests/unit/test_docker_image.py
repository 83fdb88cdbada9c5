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

from dscluster.deploy.image import BOOTSTRAP_BASE
from dscluster.deploy.policy import parse

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
INSTRS = parse((DOCKER / "Dockerfile").read_text())


def _all(keyword: str) -> list[str]:
    return [i.args for i in INSTRS if i.keyword == keyword]


def _stage(name: str) -> list:
    """The instructions of one stage: "runtime", "ops" or "final"."""
    stages, current = {}, None
    for instr in INSTRS:
        if instr.keyword == "FROM":
            current = instr.args.split(" AS ")[-1] if " AS " in instr.args else "final"
            stages[current] = []
        elif current:
            stages[current].append(instr)
    return stages[name]


def test_both_flavors_start_from_the_debian_base_and_the_compiler_stays_in_the_ops_stage():
    # One base for both flavors (made with mmdebstrap where none can be pulled); three stages.
    assert _all("FROM") == ["${BASE} AS runtime", "runtime AS ops", "runtime"]
    (arg,) = [a for a in _all("ARG") if a.startswith("BASE=")]
    assert arg == f"BASE={BOOTSTRAP_BASE}"
    ops = " ".join(i.args for i in _stage("ops") if i.keyword == "RUN")
    final = " ".join(i.args for i in _stage("final") if i.keyword == "RUN")
    assert "cuda-toolkit[" in ops and "nvcc" in ops and "--wheel-dir /opt/deepspeed-wheel" in ops
    assert "cuda-toolkit" not in final and "nvcc" not in final  # the compiler never reaches the nodes' image
    assert "from=ops,source=/opt/deepspeed-wheel" in final


def test_the_cuda_compiler_agrees_with_torchs_cuda():
    # torch 2.13.0's PyPI wheel pins cuda-toolkit==13.0.3 (its Requires-Dist); nvcc comes from the same release.
    runtime = " ".join(i.args for i in _stage("runtime") if i.keyword == "RUN")
    ops = " ".join(i.args for i in _stage("ops") if i.keyword == "RUN")
    assert "torch==2.13.0 torchvision==0.28.0 ;;" in runtime  # PyPI's default wheels: the CUDA builds
    assert re.search(r'"cuda-toolkit\[[a-z,]*nvcc[a-z,]*\]==13\.0\.3"', ops)


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
                assert re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[a-z,\-]+\])?==[\w.+]+", pkg), f"unpinned: {pkg} in {command}"


def test_deepspeed_ops_are_prebuilt_for_the_common_architectures():
    ds_run = next(r for r in _all("RUN") if "deepspeed==" in r)
    assert 'export "DS_BUILD_${op}=1"' in ds_run and "/opt/dscluster-prebuilt-ops" in ds_run
    (cuda_ops,) = [a for a in _all("ARG") if a.startswith("CUDA_OPS=")]
    for op in ("FUSED_ADAM", "CPU_ADAM", "UTILS"):
        assert op in cuda_ops.split("=", 1)[1].strip('"').split()
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
    for tool in ("${LAUNCHER_PACKAGES}", "openssh-client"):  # the launchers' own: test_image_build.py
        assert tool in apt_run


def test_recipe_jupyterlab_set_is_installed():
    pip_runs = " ".join(r for r in _all("RUN") if "pip install" in r or "pip wheel" in r)
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
        if copy.startswith("--from="):
            continue  # from a build stage, not the context
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
    (cuda_ops,) = [a for a in _all("ARG") if a.startswith("CUDA_OPS=")]
    image_flags = {f"DS_BUILD_{op}=1" for op in cuda_ops.split("=", 1)[1].strip('"').split()}
    script = (DOCKER / "verify_ops.sh").read_text()
    script_flags = set(re.findall(r"DS_BUILD_\w+=1", script))
    assert image_flags == script_flags
    (arch,) = [a for a in _all("ARG") if a.startswith("TORCH_CUDA_ARCH_LIST")]
    assert f'TORCH_CUDA_ARCH_LIST={arch.split("=", 1)[1]}' in script
    assert "deepspeed==0.19.8" in ds_run and "deepspeed==0.19.8" in script
    assert subprocess.run(["bash", "-n", str(DOCKER / "verify_ops.sh")]).returncode == 0

"""The node image on Docker Engine: build, `up`, `doctor`, `down`, with the engine chosen in the spec.

The same docker/Dockerfile and the same `dscluster image build` (its inputs hash, its skip) as the
podman test, built by this machine's dockerd; two simulated bare hosts, each running its own dockerd in
its own network namespace (so `--network host` is that host's network); the image carried to them the
way the README says for a site without a registry, `docker save IMAGE | ssh HOST docker load`; the
spec says `engine = "docker"` and no command below names an engine.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from deploying import Deploy  # tests/container/deploying.py
from deploying import ok as _ok

pytestmark = [pytest.mark.root, pytest.mark.container, pytest.mark.slow]
NAME = "imgd"
HOSTS = ("host0", "host1")


def _names(d: Deploy, host: str, what: str) -> list[str]:
    return d.containers(host) if what == "containers" else d.volumes(host)


@pytest.fixture(scope="module")
def deploy(docker_engine, docker_node_image, bare_hosts, tmp_path_factory):
    hosts = bare_hosts(len(HOSTS), NAME, engine="docker")
    d = Deploy(hosts, docker_node_image, tmp_path_factory.mktemp("imgd-home"), NAME, "docker", engine_env=False,
               client_env=docker_engine)
    nodes = [a for addr in hosts.addresses for a in ("--node", f"{addr}:1")]
    _ok(d.cli("init", "--name", NAME, *nodes, "--shared", str(hosts.shared_dir), "--user", "dscluster",
              "--engine", "docker", "--output", str(d.spec)))
    assert 'engine = "docker"' in d.spec.read_text()
    return d


def test_each_host_has_its_own_docker_and_up_names_the_missing_image(deploy):
    for host, entry in zip(HOSTS, deploy.hosts.state["hosts"]):
        # the host's login reaches the host's own daemon, which runs in the host's network namespace
        info = _ok(deploy.on_host(host, "docker", "info", "--format", "{{.Driver}} {{.CgroupDriver}}")).split()
        assert info == ["overlay2", "cgroupfs"], info
        assert os.stat(f"/proc/{entry['dockerd_pid']}/ns/net").st_ino == os.stat(f"/run/netns/{entry['netns']}").st_ino
        assert _names(deploy, host, "containers") == []
    res = deploy.up()  # the engine comes from the spec: nothing here says docker
    assert res.returncode != 0
    assert f"docker save {deploy.image} | ssh" in res.stderr and "docker load" in res.stderr, res.stderr
    assert "nothing was started" in res.stderr + res.stdout


def test_the_image_goes_to_each_host_with_docker_save_and_load(deploy):
    t0 = time.monotonic()
    for host in HOSTS:  # the README's line for a site without a registry, literally
        cmd = f"docker save {deploy.image} | ssh -F {deploy.hosts.ssh_config} {host} docker load"
        res = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=deploy.client_env, capture_output=True,
                             text=True, timeout=600)
        assert res.returncode == 0, res.stdout + res.stderr
    print(f"docker save | ssh | docker load, {len(HOSTS)} hosts: {time.monotonic() - t0:.0f} s")


def test_up_on_docker_then_doctor_is_green(deploy):
    t0 = time.monotonic()
    out = _ok(deploy.up())
    print(f"up (docker, {len(HOSTS)} hosts): {time.monotonic() - t0:.1f} s")
    for host, address in zip(HOSTS, deploy.hosts.addresses):
        assert _names(deploy, host, "containers") == [deploy.container], host
        ss = _ok(deploy.on_host(host, "ss", "-Hltn", "sport = :2222"))
        assert address in ss or "*:2222" in ss or "0.0.0.0:2222" in ss, ss
        state = _ok(deploy.on_host(host, "docker", "inspect", "--format", "{{.HostConfig.NetworkMode}}",
                                   deploy.container)).strip()
        assert state == "host"
    assert 'python = "/opt/dscluster/venv/bin/python"' in deploy.spec.read_text() and "recorded" in out
    _ok(deploy.cli("config", "trust", "--all", "--cluster", str(deploy.spec)))
    doctor = deploy.cli("doctor", "--cluster", str(deploy.spec), timeout=300)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def test_down_on_docker_leaves_nothing(deploy):
    _ok(deploy.cli("down", "--cluster", str(deploy.spec), "--purge"))
    for host in HOSTS:
        assert _names(deploy, host, "containers") == [] and _names(deploy, host, "volumes") == [], host
        assert deploy.on_host(host, "ss", "-Hltn", "sport = :2222").stdout.strip() == ""
    pids = [h["dockerd_pid"] for h in deploy.hosts.state["hosts"]]
    deploy.hosts.down()
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"dsc-{NAME}-" not in out
    assert not any(Path(f"/proc/{p}").exists() for p in pids if p), pids
    assert not any(h.pid and os.path.exists(f"/proc/{h.pid}") for h in deploy.hosts.hosts)

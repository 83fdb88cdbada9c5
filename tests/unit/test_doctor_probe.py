"""The real probe script, run on this machine through LocalRunner (two "nodes" on localhost):
the facts it gathers and the rendezvous it runs (shared nonce, master port) are real."""

from __future__ import annotations

import os
import socket
import time

import pytest
from support import free_port

from dscluster.cluster.runner import LocalRunner
from dscluster.cluster.spec import ClusterSpec as Spec
from dscluster.cluster.spec import NodeSpec as Node
from dscluster.doctor import run_doctor


@pytest.fixture
def local_pair(tmp_path, monkeypatch):
    # this machine's own JIT cache may hold a build of another process right now: look at an empty one
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "no-ext"))
    spec = Spec("local", (Node("127.0.0.1", 1, "a"), Node("127.0.0.1", 1, "b")), tmp_path / "shared", "trainer")
    spec.shared_dir.mkdir()
    return spec, [LocalRunner("a"), LocalRunner("b")]


def test_probe_gathers_facts_and_rendezvous_succeeds(local_pair):
    spec, runners = local_pair
    report = run_doctor(spec, runners=runners, master_port=free_port(), wait_s=3)
    for check in ("ssh", "python", "versions", "slots", "shared", "shm", "port", "clock", "jit-lock", "cuda-arch"):
        for node in ("a", "b"):
            assert report.get(node, check).ok, report.get(node, check)
    assert report.get("b", "shared").finding.startswith(str(spec.shared_dir))
    assert abs(report.get("b", "clock").details["skew_s"]) < 2
    assert report.elapsed_s < 10
    assert not list((spec.shared_dir / ".dscluster-doctor").iterdir())  # the nonce files are cleaned up


def test_busy_master_port_is_named_with_its_owner(local_pair):
    spec, runners = local_pair
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        report = run_doctor(spec, runners=runners, master_port=port, wait_s=1)
    fail = report.get("a", "port")
    assert not fail.ok and f"port {port} is already in use on a" in fail.finding
    assert str(os.getpid()) in fail.finding  # the owner: this pytest process
    assert report.get("b", "port").skipped


def test_missing_shared_dir_and_wrong_python_are_named(tmp_path):
    spec = Spec("local", (Node("127.0.0.1", 1, "a"),), tmp_path / "nowhere", "trainer")
    report = run_doctor(spec, runners=[LocalRunner("a")], master_port=free_port(), wait_s=1,
                        python="/nonexistent/venv/bin/python")
    assert report.get("a", "ssh").ok  # the probe fell back to python3 and still reported
    py = report.get("a", "python")
    assert not py.ok and "/nonexistent/venv/bin/python is missing or not executable" in py.finding
    shared = report.get("a", "shared")
    assert not shared.ok and "does not exist" in shared.finding and "mount" in shared.fix


def test_stale_torch_extensions_lock_is_found(local_pair, tmp_path, monkeypatch):
    spec, runners = local_pair
    lock = tmp_path / "ext" / "py311_cpu" / "fused_adam" / "lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    report = run_doctor(spec, runners=runners, master_port=free_port(), wait_s=2)
    result = report.get("a", "jit-lock")
    assert str(lock) in result.finding
    if result.details.get("locks"):  # no compiler running anywhere on this machine: the lock is stale
        assert not result.ok and result.fix == f"remove it: rm -f {lock}"
    else:  # another build is running on this (shared) machine right now: only a warning
        assert result.status == "warn" and "compiler" in result.finding


def test_gpus_are_counted_from_nvidia_smi(tmp_path, monkeypatch):
    """A stand-in nvidia-smi on PATH: GPU mode, GPUs vs slots, driver in the versions, CUDA_VISIBLE_DEVICES."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H200, 143771 MiB, 580.159.04'\necho 'NVIDIA H200, 143771 MiB, 580.159.04'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    spec = Spec("gpu", (Node("127.0.0.1", 4, "g0"),), tmp_path, "trainer")
    report = run_doctor(spec, runners=[LocalRunner("g0")], master_port=free_port(), wait_s=1)
    slots = report.get("g0", "slots")
    assert not slots.ok and "2 GPU(s) visible but slots = 4" in slots.finding and "slots = 2" in slots.fix
    assert "driver 580.159.04" in report.get("g0", "versions").finding
    assert report.summary["backend"] == "nccl"

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    spec = Spec("gpu", (Node("127.0.0.1", 1, "g0"),), tmp_path, "trainer")
    report = run_doctor(spec, runners=[LocalRunner("g0")], master_port=free_port(), wait_s=1)
    assert report.get("g0", "slots").ok and "1 GPU(s) (NVIDIA H200)" in report.get("g0", "slots").finding

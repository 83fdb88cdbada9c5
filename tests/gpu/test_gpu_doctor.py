"""doctor on a real GPU machine (device machine only): the probe sees the GPUs, the NCCL all-reduce
of `doctor --collective` forms a group over every GPU and reports its bandwidth, and the
TORCH_CUDA_ARCH_LIST=9.0a trap of NVIDIA's containers is named with its fix.

The node is this machine through LocalRunner (the device has no sshd); everything after the transport
is the code `dscluster doctor --collective` runs on a cluster.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


def _report(tmp_path, monkeypatch, arch: str):
    import torch

    from dscluster.cluster.runner import LocalRunner
    from dscluster.cluster.spec import ClusterSpec, NodeSpec
    from dscluster.doctor.engine import run_doctor

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU here")
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", arch)
    gpus = torch.cuda.device_count()
    spec = ClusterSpec(name="gpu-local", nodes=(NodeSpec("127.0.0.1", gpus, "gpu0"),), shared_dir=tmp_path,
                       ssh_user="root")
    report = run_doctor(spec, collective=True, runners=[LocalRunner("gpu0")], master_port=29731, wait_s=3)
    return gpus, {r.check: r for r in report.results}


def test_collective_is_a_real_nccl_all_reduce_over_every_gpu(tmp_path, monkeypatch):
    gpus, results = _report(tmp_path, monkeypatch, "9.0")
    coll = results["collective"]
    assert coll.ok, coll
    assert coll.details["backend"] == "nccl" and coll.details["world_size"] == gpus
    assert coll.details["correct"] is True and coll.details["busbw_gbs"] >= 0
    assert results["slots"].ok, results["slots"]  # the probe counted at least `gpus` GPUs
    assert results["cuda-arch"].ok


def test_arch_list_with_a_letter_suffix_is_named_with_the_fix(tmp_path, monkeypatch):
    _gpus, results = _report(tmp_path, monkeypatch, "9.0a")
    arch = results["cuda-arch"]
    assert not arch.ok and "9.0a" in arch.finding and "TORCH_CUDA_ARCH_LIST=9.0" in arch.fix


def test_nccl_transport_is_read_from_nccls_own_report(tmp_path, monkeypatch):
    """Live: the collective ran with NCCL_DEBUG=INFO (INIT,NET) and doctor read NCCL's own lines."""
    _gpus, results = _report(tmp_path, monkeypatch, "9.0")
    tp = results["transport"]
    assert tp.status in ("ok", "warn") and tp.details["nccl_lines"] > 0, tp
    print(f"transport: {tp.status} {tp.finding}")

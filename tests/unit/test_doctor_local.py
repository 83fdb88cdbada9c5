"""`doctor --local` (the default with no spec and no simulated cluster) and launch's local pre-flight."""

from __future__ import annotations

import json

import pytest

from dscluster import cli
from dscluster.errors import ClusterError, ExitCode
from dscluster.runs.preparing.preflight import check_local_cuda_arch


def test_launch_refuses_an_arch_list_deepspeed_cannot_parse(monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0a")
    with pytest.raises(ClusterError) as err:
        check_local_cuda_arch({})
    assert "9.0a" in err.value.message and "TORCH_CUDA_ARCH_LIST=9.0" in err.value.hint
    check_local_cuda_arch({"TORCH_CUDA_ARCH_LIST": "8.0;9.0+PTX"})  # --env wins over this shell's


def test_doctor_without_a_spec_checks_this_machine(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path))
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0a")
    assert cli.main(["doctor", "--json", "--fast"]) == ExitCode.CLUSTER
    report = json.loads(capsys.readouterr().out)
    by_check = {r["check"]: r for r in report["results"]}
    assert report["nodes"] == ["localhost"]
    assert not by_check["cuda-arch"]["ok"] and "9.0a" in by_check["cuda-arch"]["finding"]
    assert by_check["ssh"]["skipped"] and by_check["reach"]["skipped"]  # nothing between nodes to check
    assert by_check["versions"]["ok"] and by_check["shm"]["ok"]
    assert cli.main(["doctor", "--local", "--cluster", "x.toml"]) == ExitCode.USAGE

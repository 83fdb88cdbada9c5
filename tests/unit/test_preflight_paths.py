"""Every way to start a run checks this machine's torch JIT cache first: a `lock` left by a compile that was
killed makes every DeepSpeed launch wait on it forever, silently. Local, demo, Slurm (allocation and batch),
`--skip-doctor` cluster runs, restart, the panel's form and the Python API are each refused with the lock's
path and the command that removes it; a recent lock (maybe a build still running) only warns."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from dscluster import cli
from dscluster.doctor import probe_facts
from dscluster.errors import ClusterError, ExitCode
from dscluster.runs import service
from dscluster.runs.preparing.prepare import prepare
from dscluster.runs.records import store
from dscluster.runs.records.request import RunRequest

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")


def _lock(root: Path, age_s: float) -> Path:
    lock = root / f"py{sys.version_info.major}{sys.version_info.minor}_cpu" / "cpu_adam" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    then = time.time() - age_s
    os.utime(lock, (then, then))
    return lock


@pytest.fixture
def extensions(tmp_path, monkeypatch, dscluster_home):
    """An empty torch extensions cache of this test's own; no compiler counts as running (this machine is
    shared: another user's build must not turn the verdict into 'a build may be running')."""
    root = tmp_path / "torch_extensions"
    root.mkdir()
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(root))
    monkeypatch.setattr(probe_facts, "COMPILERS", ())
    monkeypatch.chdir(tmp_path)
    return root


def _refused(capsys, argv: list[str], lock: Path) -> str:
    assert cli.main(argv) == ExitCode.CLUSTER, argv
    err = capsys.readouterr().err
    assert str(lock) in err and f"rm -f {lock}" in err and "Traceback" not in err, err
    return err


def _no_runs(tmp_path: Path) -> None:
    assert not list((tmp_path / "shared").glob("runs/*/run.json"))  # refused before anything was recorded


def _cluster_spec(tmp_path: Path, capsys) -> Path:
    spec = tmp_path / "c.toml"
    assert cli.main(["init", "--node", "127.0.0.1", "--shared", str(tmp_path / "shared"), "--name", "pflt",
                     "-o", str(spec), "--force"]) == 0
    capsys.readouterr()
    return spec


def test_local_demo_and_slurm_starts_are_refused(extensions, tmp_path, capsys):
    lock = _lock(extensions, 3600)
    _refused(capsys, ["launch", "--local", "1", "--detach", SCRIPT], lock)
    _refused(capsys, ["launch", "--local", "1", "--dry-run", SCRIPT], lock)  # a dry run says so too
    _refused(capsys, ["demo", "--cpu", "--steps", "1", "--detach"], lock)
    # Slurm reaches its nodes through Slurm, not ssh (no doctor over ssh), and shares this home as a rule.
    slurm = ["--launcher", "slurm", "--nodes", "1", "--ntasks-per-node", "1", "--dry-run", SCRIPT]
    _refused(capsys, ["launch", *slurm], lock)
    _refused(capsys, ["launch", "--sbatch", *slurm[2:]], lock)
    _no_runs(tmp_path)


def test_a_cluster_launch_that_skips_doctor_still_checks_this_machine_and_says_so(extensions, tmp_path, capsys):
    spec = _cluster_spec(tmp_path, capsys)
    lock = _lock(extensions, 3600)
    err = _refused(capsys, ["launch", "--cluster", str(spec), "--skip-doctor", "--dry-run", SCRIPT], lock)
    assert "--skip-doctor" in err and "only this machine" in err
    lock.unlink()
    assert cli.main(["launch", "--cluster", str(spec), "--skip-doctor", "--dry-run", SCRIPT]) == 0
    assert "doctor's checks on the nodes are skipped (--skip-doctor)" in capsys.readouterr().err


def test_a_restart_is_refused(extensions, tmp_path, capsys):
    prep = prepare(RunRequest.of(command=[SCRIPT], local=1, name="old", cwd=str(tmp_path)))
    run_dir = store.create_run(prep.shared, prep.record)
    store.write_record(run_dir, store.read_record(run_dir).replace(status="failed"))
    lock = _lock(extensions, 3600)
    _refused(capsys, ["restart", prep.record.id], lock)
    assert [p.name for p in (tmp_path / "shared" / "runs").iterdir()] == [run_dir.name]  # no new run


def test_the_panels_form_and_the_python_api_are_refused(extensions, tmp_path):
    from dscluster.jupyter.handlers import _status_for
    from dscluster.jupyter.launching import parse_launch

    lock = _lock(extensions, 3600)
    request = parse_launch({"script": SCRIPT, "nprocs": 1}, cwd=str(tmp_path))
    for start in (service.prepare_request, service.launch):  # the form's check button, then its launch
        with pytest.raises(ClusterError) as err:
            start(request)
        assert f"rm -f {lock}" in err.value.hint and _status_for(err.value) == 409
    import dscluster

    with pytest.raises(ClusterError):
        dscluster.launch(SCRIPT, nprocs=1, cwd=str(tmp_path))
    _no_runs(tmp_path)


def test_a_recent_lock_only_warns(extensions, tmp_path, capsys):
    lock = _lock(extensions, 120)  # past the grace period, short of stale: maybe a build on another node
    assert cli.main(["launch", "--local", "1", "--dry-run", SCRIPT]) == 0
    err = capsys.readouterr().err
    assert f"lock {lock} is" in err and "s old" in err and "Traceback" not in err
    slurm = ["launch", "--launcher", "slurm", "--nodes", "1", "--ntasks-per-node", "1", "--dry-run", SCRIPT]
    assert cli.main(slurm) == 0 and str(lock) in capsys.readouterr().err


def test_a_local_launch_checks_the_cuda_arch_list_too(extensions, monkeypatch):
    """`--local` runs this machine's whole pre-flight: a TORCH_CUDA_ARCH_LIST DeepSpeed's op builder cannot
    parse (NVIDIA's containers set 9.0a) is refused with the list that works; a Slurm start checks the
    lock only (the nodes' environment is Slurm's)."""
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0a")
    with pytest.raises(ClusterError) as err:
        prepare(RunRequest.of(command=[SCRIPT], local=1), dry_run=True)
    assert "TORCH_CUDA_ARCH_LIST" in err.value.message and "9.0" in err.value.hint
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    assert prepare(RunRequest.of(command=[SCRIPT], local=1), dry_run=True).record.launch.launcher == "local"

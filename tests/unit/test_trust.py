"""dscluster.trust at unit level: the weights-only loads with DeepSpeed's allow-list, the launching user's
private directories, and the descriptor-based creates and removes (the attacks themselves are replayed as
the node user on the simulated cluster: tests/cluster/test_trust_boundary.py)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dscluster import fsutil, trust
from dscluster.launcher.plan import LaunchRequest, Target, build_plan

_EVIL = """
import os, sys, torch
class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
torch.save({"module": {"w": torch.ones(2), "evil": Payload()}}, sys.argv[1])
"""


def _evil(tmp_path: Path) -> tuple[Path, Path]:
    path, marker = tmp_path / "mp_rank_00_model_states.pt", tmp_path / "ran"
    subprocess.run([sys.executable, "-c", _EVIL, str(path), str(marker)], check=True)
    return path, marker


def test_a_pickle_that_runs_code_is_refused_and_never_run(tmp_path):
    path, marker = _evil(tmp_path)
    with pytest.raises(trust.RefusedPickle, match="GLOBAL posix.system") as err:
        trust.load_tensors(path)
    assert not marker.exists() and "Move it aside" in err.value.hint
    # DeepSpeed's own loaders ask for weights_only=False: inside the block they are weights-only too.
    with pytest.raises(trust.RefusedPickle), trust.weights_only_loads(path):
        torch.load(path, weights_only=False)
    assert not marker.exists()
    assert "TORCH_FORCE_WEIGHTS_ONLY_LOAD" not in os.environ  # restored after the block


def test_the_types_deepspeed_saves_load(tmp_path):
    """What DeepSpeed 0.19's ZeRO 1-3 optimizer states hold besides tensors and containers (found with
    torch.serialization.get_unsafe_globals_in_checkpoint on real saves)."""
    from deepspeed.runtime.fp16.loss_scaler import DynamicLossScaler, LossScaler
    from deepspeed.runtime.zero.config import ZeroStageEnum
    from deepspeed.utils.tensor_fragment import fragment_address

    state = {"optimizer_state_dict": {"zero_stage": ZeroStageEnum.gradients, "loss_scaler": LossScaler(1.0),
                                      "dyn": DynamicLossScaler(2.0**16, 1000, 1.0, 2, True),
                                      "param_slice_mappings": [{"w": fragment_address(numel=4, start=0)}],
                                      "fp32": [torch.arange(4.0)]}, "ds_version": "0.19.8"}
    torch.save(state, tmp_path / "optim_states.pt")
    back = trust.load_tensors(tmp_path / "optim_states.pt")["optimizer_state_dict"]
    assert back["zero_stage"] == ZeroStageEnum.gradients and back["loss_scaler"].cur_scale == 1.0
    assert back["param_slice_mappings"][0]["w"].numel == 4 and torch.equal(back["fp32"][0], torch.arange(4.0))


def _nobody() -> pwd.struct_passwd:
    return pwd.getpwnam("nobody")


@pytest.fixture
def others_dir(tmp_path):
    """A directory another user owns (the node user's run directory, as root sees it)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory of another user")
    folder = tmp_path / "others"
    folder.mkdir()
    os.chown(folder, _nobody().pw_uid, _nobody().pw_gid)
    return folder


def test_a_checkpoint_file_planted_as_a_symlink_is_not_followed(tmp_path, others_dir):
    good = tmp_path / "real.pt"
    torch.save({"w": torch.ones(1)}, good)
    (others_dir / "mp_rank_00_model_states.pt").symlink_to(good)
    with pytest.raises(fsutil.UnsafePath):
        trust.load_tensors(others_dir / "mp_rank_00_model_states.pt")
    with pytest.raises(fsutil.UnsafePath):
        trust.refuse_symlinks(others_dir, "*.pt")


def test_unlink_and_ensure_dir_never_act_through_a_planted_symlink(tmp_path, others_dir):
    target = tmp_path / "root-only"
    (target / "run").mkdir(parents=True)
    victim = target / "run" / "node_env.sh"
    victim.write_text("x")
    target.chmod(0o700)
    (others_dir / "runs").symlink_to(target)
    with pytest.raises(fsutil.UnsafePath):
        fsutil.unlink(others_dir / "runs" / "run" / "node_env.sh")
    assert victim.exists()
    (others_dir / ".dscluster").symlink_to(target)
    with pytest.raises(fsutil.UnsafePath):
        fsutil.ensure_dir(others_dir / ".dscluster", 0o755)
    assert oct(target.stat().st_mode & 0o777) == oct(0o700)
    assert fsutil.ensure_dir(others_dir / "meta", 0o755) and oct((others_dir / "meta").stat().st_mode & 0o777) == "0o755"
    fsutil.unlink(others_dir / "meta" / "absent")  # missing_ok


def test_export_refuses_a_planted_export_symlink(tmp_path, others_dir):
    from dscluster.train import checkpoint as ck
    from dscluster.train.export import export

    step = others_dir / "checkpoints" / "step-2"
    step.mkdir(parents=True)
    torch.save({"module": {"w": torch.ones(2)}, "step": 2}, step / "mp_rank_00_model_states.pt")
    ck.commit(step.parent, 2, {"world_size": 1, "zero_stage": 0})
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (others_dir / "export").symlink_to(target)
    with pytest.raises(Exception, match="symlink"):
        export(step, others_dir / "export" / "step-2.pt", "fp32")
    assert list(target.iterdir()) == []
    done = export(step, others_dir / "fine" / "step-2.pt", "fp32")
    assert torch.equal(torch.load(done.path, weights_only=True)["w"], torch.ones(2))


def test_private_dirs_are_the_launching_users_own(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("DSCLUSTER_HOME", str(home))
    path = trust.runner_dir("r-1")
    assert path == home / "runs" / "r-1" and oct(path.stat().st_mode & 0o777) == "0o700"
    assert trust.is_private_dir(path)
    with pytest.raises(Exception, match="not a valid name"):
        trust.runner_dir("../escape")
    trust.remove_runner_dir("r-1")
    assert not path.exists()
    # A cluster state dir named by a run record counts only when it is ours, private and holds an identity.
    state = home / "sims" / "c" / "cluster"
    state.mkdir(parents=True, mode=0o700)
    assert trust.own_state_dir("c", state) == home / "clusters" / "c"  # no identity there
    (state / "id_ed25519").write_text("key")
    assert trust.own_state_dir("c", state) == state
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    (open_dir / "id_ed25519").write_text("key")
    # ... else the launching user's own one for the cluster's name (a simulated cluster's here)
    assert trust.own_state_dir("c", open_dir) == state


def test_the_runner_reads_its_hostfile_and_env_file_from_the_private_dir(tmp_path):
    run_dir, private = tmp_path / "run", tmp_path / "private"
    plan = build_plan(LaunchRequest(run_id="r", run_dir=run_dir, target=Target("train.py"),
                                    hosts=(("node0", 1), ("node1", 1)), master_port=29500, files_dir=private))
    assert f"--hostfile={private / 'hostfile'}" in plan.argv and plan.env["DS_ENV_FILE"] == str(private / "ds_env")
    written = {f.path: f.text for f in plan.files}
    assert written[private / "hostfile"] == written[run_dir / "hostfile"] == "node0 slots=1\nnode1 slots=1\n"
    assert written[private / "ds_env"] == written[run_dir / "ds_env"]  # the run dir's are copies to read
    assert not any(str(run_dir) in a for a in plan.argv if a.startswith("--hostfile"))


def test_the_image_healthcheck_runs_isolated_python_from_a_root_directory(tmp_path):
    """Attack 6: the HEALTHCHECK runs as root with the node user's home as its working directory: a
    json.py planted there is not imported (python -I, cd /)."""
    home = tmp_path / "home"
    lab = home / ".dscluster" / "lab" / os.uname().nodename
    lab.mkdir(parents=True)
    (lab / "lab.json").write_text('{"ip": "127.0.0.1", "port": 9}')
    marker = tmp_path / "planted-ran"
    (home / "json.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    script = Path(__file__).resolve().parents[2] / "docker" / "healthcheck.sh"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    (bindir / "ss").write_text("#!/bin/sh\necho LISTEN\n")
    (bindir / "ss").chmod(0o755)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(home), "DSCLUSTER_HOME": str(home / ".dscluster")}
    res = subprocess.run(["sh", str(script)], cwd=home, env=env, capture_output=True, text=True, timeout=60)
    assert not marker.exists()
    assert "does not answer" in res.stdout, res.stdout + res.stderr  # port 9: the probe ran, as plain stdlib


def test_a_run_restarted_on_this_machine_needs_a_record_only_we_could_write(tmp_path, monkeypatch):
    """Restarting on this machine (a local run, or --local) runs the recorded program as the launching user:
    a record from a directory another user can write (the shared storage) is refused, with the fix."""
    from dscluster.errors import PermissionNeeded
    from dscluster.runs import service
    from dscluster.runs.records import store

    home = tmp_path / "home"
    monkeypatch.setenv("DSCLUSTER_HOME", str(home))
    own = tmp_path / "own" / "runs" / "r-1"
    own.mkdir(parents=True)
    trust.check_local_restart(own, "r-1")  # ours: fine
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # the node user's storage
    theirs = shared / "runs" / "r-2"
    theirs.mkdir(parents=True)
    with pytest.raises(PermissionNeeded, match="another user can write") as err:
        trust.check_local_restart(theirs, "r-2")
    assert "--local" in err.value.hint
    # The same through restart: the refused record's program never runs.
    store.write_record(theirs, store.RunRecord.from_json(
        {"id": "r-2", "status": "failed", "launch": {"program": "/tmp/evil.py", "launcher": "local", "local_procs": 1}}))
    with pytest.raises(PermissionNeeded):
        service.restart_request(theirs)

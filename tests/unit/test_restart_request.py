"""Run.restart / the panel's Restart: the new run keeps the old one's program, args, cluster, environment
and supervision settings, adds the old save dir (so --resume auto continues from it), and takes secret
values again (they were never recorded). Unit level: the request is captured instead of launched."""

from __future__ import annotations

import pytest

from dscluster.errors import UsageError
from dscluster.runs import service
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


def test_restart_keeps_env_and_settings_and_takes_secrets_again(dscluster_home, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    launch_cfg = {"program": "dscluster.train", "is_module": True, "args": ["--steps", "9"], "launcher": "openmpi",
                  "cluster_arg": "/etc/dscluster/dscluster.toml", "max_restarts": 2, "cwd": str(tmp_path),
                  "env": {"OMP_NUM_THREADS": "1"}, "stall_timeout": 60.0, "restart_wait": 5.0}
    run_dir = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("old"), "name": "old", "argv": ["train.py"],
                                        "env": {"OMP_NUM_THREADS": "1", "HF_TOKEN": "***"}, "launch": launch_cfg}))
    store.write_record(run_dir, store.read_record(run_dir).replace(status="stopped"))
    captured = []
    monkeypatch.setattr(service, "launch", lambda request: captured.append(request) or "new-run")
    ref = run_dir
    with pytest.raises(UsageError, match="HF_TOKEN") as err:
        service.restart(ref)  # without its secret the new run would fail later, far from the cause
    assert "--env HF_TOKEN" in err.value.hint and not captured
    assert service.restart(ref, env={"HF_TOKEN": "hf_again"}) == "new-run"
    request = captured[0]
    assert sorted(request.program.env) == ["HF_TOKEN=hf_again", "OMP_NUM_THREADS=1"]
    sup = request.supervision
    assert (request.place.launcher, sup.stall_timeout, sup.restart_wait, sup.max_restarts) == ("openmpi", 60.0, 5.0, 2)
    args = request.program.args
    assert args[:2] == ("--steps", "9") and args[-2:] == ("--save-dir", str(run_dir / "checkpoints"))
    opts = service.resolved(request)
    assert sorted(opts.program.env) == ["HF_TOKEN=hf_again", "OMP_NUM_THREADS=1"]
    assert (opts.place.launcher, opts.supervision.stall_timeout, opts.supervision.restart_wait) == ("openmpi", 60.0, 5.0)


def test_api_env_must_be_names_to_strings():
    from dscluster.errors import ConfigError
    from dscluster.jupyter.launching import checked_env as _checked_env

    assert _checked_env({"A": "1"}) == {"A": "1"}
    with pytest.raises(ConfigError, match="env must be"):
        _checked_env({"A": 1})
    with pytest.raises(UsageError):
        _checked_env({"1BAD": "x"})


def test_restart_refuses_while_a_run_saves_to_the_same_checkpoints(dscluster_home, tmp_path, monkeypatch):
    from dscluster.runs.service import RunBusy

    shared = tmp_path / "shared"
    cfg = {"program": "dscluster.train", "is_module": True, "args": ["--steps", "9"], "launcher": "local",
           "local_procs": 1, "cwd": str(tmp_path), "env": {}}
    old = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("old"), "name": "old", "argv": [], "env": {},
                                    "launch": cfg}))
    store.write_record(old, store.read_record(old).replace(status="failed"))
    first = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("old"), "name": "old", "argv": [], "env": {},
                                      "launch": {**cfg, "args": ["--steps", "9", "--save-dir", str(old / "checkpoints")]}}))
    store.write_record(first, store.read_record(first).replace(status="running"))  # the first restart, still going
    monkeypatch.setattr(service, "launch", lambda request: "never")
    with pytest.raises(RunBusy, match=first.name) as err:
        service.restart(old)
    assert "dscluster stop" in err.value.hint
    store.write_record(first, store.read_record(first).replace(status="failed"))
    assert service.restart(old) == "never"


def test_restart_on_other_nodes_or_on_this_machine(dscluster_home, tmp_path, monkeypatch):
    # After a node is lost for good: the same program and checkpoints on the hostfile of the nodes that remain.
    shared = tmp_path / "shared"
    cfg = {"program": "train.py", "is_module": False, "args": ["--steps", "9"], "launcher": "pdsh",
           "cluster_arg": "/etc/dscluster/dscluster.toml", "cwd": str(tmp_path), "env": {}}
    old = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("old"), "name": "old", "argv": [], "env": {},
                                    "launch": cfg}))
    store.write_record(old, store.read_record(old).replace(status="failed"))
    captured = []
    monkeypatch.setattr(service, "launch", lambda request: captured.append(request) or "new-run")
    ref = old
    service.restart(ref, hostfile="/work/two-nodes")
    service.restart(ref, local=2)
    on_two, here = captured
    assert (on_two.place.cluster, on_two.place.local, on_two.place.launcher) == ("/work/two-nodes", None, "pdsh")
    assert (here.place.cluster, here.place.local, here.place.launcher) == (None, 2, None)
    # A user's script finds the old run's checkpoints through dscluster.checkpoint's directory variable.
    dirs = {dict(e.split("=", 1) for e in r.program.env)["DSCLUSTER_CHECKPOINT_DIR"] for r in (on_two, here)}
    assert dirs == {str(old / "checkpoints")}
    with pytest.raises(UsageError, match="different places to restart on"):
        service.restart(ref, hostfile="/work/two-nodes", local=2)

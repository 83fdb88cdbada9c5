"""Continuing a run on another number of ranks: the global batch kept where it divides (batchplan), the
node names of `restart --hosts` checked, the supervisor's --allow-shrink layout planned (runs/preparing/shrink.py),
and what prepare hands the ranks of a restarted attempt (their ds_config). No processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dscluster import batchplan
from dscluster.batchplan import Batch, plan
from dscluster.errors import UsageError
from dscluster.runs.preparing import shrink
from dscluster.runs.preparing.prepare import prepare
from dscluster.runs.records.request import RunRequest

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")


@pytest.mark.parametrize(("before", "world", "after"), [
    (Batch(4, 2, 3), 2, Batch(4, 3, 2)),   # 24 on 2 ranks: accumulation 2 -> 3
    (Batch(4, 1, 3), 2, Batch(3, 2, 2)),   # 12 on 2 ranks: 6 each, micro 4 does not divide 6 -> 3 x 2
    (Batch(2, 4, 2), 4, Batch(2, 2, 4)),   # growing: accumulation lowered
    (Batch(8, 1, 2), 4, Batch(4, 1, 4)),   # growing past the accumulation: a smaller micro batch
    (Batch(4, 2, 3), 3, Batch(4, 2, 3)),   # same world: unchanged
    (Batch(7, 1, 1), 7, Batch(1, 1, 7)),   # one sample per rank
])
def test_the_global_batch_is_kept_where_the_new_world_divides_it(before, world, after):
    got = plan(before, world)
    assert got.after == after and got.kept and got.after.global_batch == before.global_batch
    assert got.after.micro <= before.micro  # never a larger micro batch: it may not fit in memory


def test_where_the_world_does_not_divide_it_the_new_global_batch_is_said_plainly():
    got = plan(Batch(4, 1, 3), 8)  # 12 on 8 ranks: 32 (accum 1) is the nearest with micro 4
    assert not got.kept and got.after == Batch(4, 1, 8)
    text = got.describe()
    assert "12" in text and "32" in text and "8 ranks do not divide 12" in text
    near = plan(Batch(2, 5, 3), 4)  # 30 on 4 ranks: 24 (accum 3) and 32 (accum 4); 32 is nearer
    assert near.after == Batch(2, 4, 4) and near.after.global_batch == 32 and not near.kept


def test_a_kept_batch_is_described_with_both_layouts():
    text = plan(Batch(4, 2, 3), 2).describe()
    assert "global batch 24 kept on 2 ranks instead of 3" in text
    assert "gradient accumulation 2 -> micro batch 4 x gradient accumulation 3" in text


def test_apply_sets_the_three_batch_keys_and_keeps_the_rest():
    cfg = {"train_batch_size": 24, "train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 1}}
    out = batchplan.apply(cfg, plan(Batch(4, 2, 3), 2))
    assert out == {"train_batch_size": 24, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 3,
                   "zero_optimization": {"stage": 1}}
    assert cfg["train_batch_size"] == 24 and "gradient_accumulation_steps" not in cfg  # a copy
    assert batchplan.apply(None, plan(Batch(8, 1, 3), 2))["train_batch_size"] == 24


def test_the_batch_before_comes_from_the_commit_then_the_record_then_the_trainers_default():
    commit = {"batch": {"global": 24, "micro": 4, "accum": 2, "world": 3}}
    from dscluster.runs.records.record import RunRecord

    record = RunRecord.from_json({"id": "r", "world_size": 3, "ds_config": {
        "train_batch_size": 6, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}})
    assert batchplan.recorded_batch(commit, record) == Batch(4, 2, 3)
    assert batchplan.recorded_batch({"batch": "junk"}, record) == Batch(2, 1, 3)
    trainer = RunRecord.from_json({"id": "r", "world_size": 2, "ds_config": None,
                                   "launch": {"is_module": True, "program": "dscluster.train"}})
    assert batchplan.recorded_batch(None, trainer) == Batch(8, 1, 2)  # dssetup's default micro batch 8
    script = RunRecord.from_json({"id": "r", "world_size": 2, "ds_config": None,
                                  "launch": {"is_module": False, "program": "train.py"}})
    assert batchplan.recorded_batch(None, script) is None  # nothing says what the script's batch is


def test_restart_hosts_are_spec_names_in_spec_order_and_unknown_ones_are_named():
    nodes = ["node1", "node2", "node3"]
    assert shrink.pick_hosts("node3,node1", nodes, "c.toml") == ("node1", "node3")  # the master stays first
    with pytest.raises(UsageError) as err:
        shrink.pick_hosts("node1,nod3,node9", nodes, "c.toml")
    assert "nod3, node9 not in cluster c.toml (its nodes: node1, node2, node3)" in err.value.message
    assert "--hosts node1" in err.value.hint and err.value.setting == "--hosts"
    with pytest.raises(UsageError, match="comma-separated"):
        shrink.pick_hosts("node1,,node2", nodes, "c.toml")


def test_a_shrink_drops_the_lost_hosts_and_plans_the_batch():
    hosts = [["10.0.0.1", 1], ["10.0.0.2", 1], ["10.0.0.3", 1]]
    names = {"10.0.0.1": "node1", "10.0.0.2": "node2", "10.0.0.3": "node3"}
    got = shrink.plan_shrink(hosts, ["10.0.0.2"], names, Batch(4, 2, 3))
    assert got.hosts == (("10.0.0.1", 1), ("10.0.0.3", 1)) and got.lost == ("node2",) and got.world == 2
    assert got.batch.after == Batch(4, 3, 2)
    text = got.describe(4, 8, names)
    assert text.startswith("node2 did not come back within 4s (--allow-shrink): the run continues on node1, node3 "
                           "(2 ranks instead of 3) from step-8")
    assert "global batch 24 kept" in text
    assert shrink.plan_shrink(hosts, [h for h, _ in hosts], names, None) is None  # nothing remains
    assert shrink.plan_shrink(hosts, ["10.0.0.3"], names, None).batch is None
    assert shrink.include_without("a:0,1@b:0@c:1", ["b"]) == "a:0,1@c:1"
    assert shrink.include_without(None, ["b"]) is None


def test_status_lines_name_the_lost_node_and_the_batch():
    from dscluster.runs.records.record import RunRecord

    view = RunRecord.from_json({"id": "r", "shrinks": [{"text": "node2 did not come back within 4s"}],
                                "batch_plan": {"text": "global batch 24 kept on 2 ranks", "kept": True}})
    lines = shrink.status_lines(view)
    assert len(lines) == 2 and "node2 did not come back" in lines[0] and "global batch 24 kept" in lines[1]
    assert shrink.status_lines(RunRecord.from_json({"id": "r"})) == []


def _cfg(tmp_path, **batch) -> str:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({**batch, "zero_optimization": {"stage": 1}}))
    return str(path)


def test_a_restart_on_fewer_ranks_hands_the_ranks_a_ds_config_that_keeps_the_global_batch(dscluster_home, tmp_path):
    # The user's ds_config names all three keys for 3 ranks: as written it is invalid on 2.
    cfg = _cfg(tmp_path, train_batch_size=24, train_micro_batch_size_per_gpu=4, gradient_accumulation_steps=2)
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed", "--deepspeed_config", cfg], local=2,
                                 cwd=str(tmp_path), keep_batch=Batch(4, 2, 3)))
    rec, launch = prep.record.to_json(), prep.record.to_json()["launch"]
    assert rec["ds_config"]["gradient_accumulation_steps"] == 3 and rec["ds_config"]["train_batch_size"] == 24
    assert rec["batch_plan"]["kept"] and "global batch 24 kept on 2 ranks" in rec["batch_plan"]["text"]
    ranks_cfg = json.loads(launch["ds_config_text"])
    assert (ranks_cfg["train_batch_size"], ranks_cfg["gradient_accumulation_steps"]) == (24, 3)
    assert ranks_cfg["zero_optimization"] == {"stage": 1} and "csv_monitor" in ranks_cfg
    run_cfg = str(Path(prep.shared) / "runs" / rec["id"] / "ds_config.json")
    assert launch["rank_args"][-1] == run_cfg and launch["args"][-1] == cfg  # a later restart repeats the user's


def test_a_restart_of_the_reference_trainer_without_a_config_gets_one_with_the_batch_keys(dscluster_home, tmp_path):
    prep = prepare(RunRequest.of(command=["dscluster.train", "--steps", "4"], module=True, local=2,
                                 cwd=str(tmp_path), keep_batch=Batch(8, 1, 3)))
    launch = prep.record.to_json()["launch"]
    assert json.loads(launch["ds_config_text"]) == {"train_batch_size": 24, "train_micro_batch_size_per_gpu": 6,
                                                    "gradient_accumulation_steps": 2}
    assert launch["rank_args"][-2:] == ["--deepspeed_config", str(Path(prep.shared) / "runs" / prep.record.to_json()["id"] /
                                                                   "ds_config.json")]


def test_a_restart_on_the_same_world_size_changes_nothing(dscluster_home, tmp_path):
    cfg = _cfg(tmp_path, train_micro_batch_size_per_gpu=4, gradient_accumulation_steps=2)
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed_config", cfg], local=2, cwd=str(tmp_path),
                                 keep_batch=Batch(4, 2, 2)))
    assert "batch_plan" not in prep.record.to_json() and prep.record.to_json()["ds_config"]["train_batch_size"] == 16


def test_restart_hosts_reach_the_launch_as_a_whole_node_include(dscluster_home, tmp_path, monkeypatch):
    from dscluster.runs import service
    from dscluster.runs.records import store
    from dscluster.runs.records.record import RunRecord

    spec = tmp_path / "dscluster.toml"
    nodes = "".join(f'[[nodes]]\nname = "node{i}"\naddress = "10.9.0.{i}"\nslots = 1\n' for i in (1, 2, 3))
    spec.write_text(f'[cluster]\nname = "c"\nshared_dir = "{tmp_path / "shared"}"\nssh_user = "u"\n{nodes}')
    cfg = {"program": "dscluster.train", "is_module": True, "args": [], "launcher": "pdsh", "cluster_arg": str(spec),
           "cwd": str(tmp_path), "env": {}, "allow_shrink": True}
    run_dir = store.create_run(tmp_path / "shared", RunRecord.from_json({"id": store.new_run_id("old"), "name": "old", "argv": [],
                                                    "env": {}, "launch": cfg, "world_size": 3}))
    store.write_record(run_dir, store.read_record(run_dir).replace(status="failed"))
    captured = []
    monkeypatch.setattr(service, "launch", lambda request: captured.append(request) or "new-run")
    with pytest.raises(UsageError, match="node9 not in cluster"):
        service.restart(run_dir, hosts="node1,node9")
    with pytest.raises(UsageError, match="different places"):
        service.restart(run_dir, hosts="node1", local=2)
    assert service.restart(run_dir, hosts="node3,node1") == "new-run"
    request = captured[0]
    assert request.runner.include == "node1@node3" and request.supervision.allow_shrink
    assert request.carried.keep_batch == Batch(8, 1, 3)  # the trainer's default config on the run's 3 ranks
    opts = service.resolved(request)
    assert opts.runner.include == "node1@node3" and opts.supervision.allow_shrink
    assert opts.carried.keep_batch == Batch(8, 1, 3)

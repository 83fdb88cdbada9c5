"""The Hugging Face Trainer as a first-class client, at unit level: HF's `--deepspeed FILE` is the run's
ds_config ("auto" understood), rank 0's log dicts become metrics at the right step, checkpoint-N judged
complete or torn and torn ones moved aside (never deleted), and an attempt explained from its own logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dscluster import dsconfig, hfckpt
from dscluster.errors import ConfigError
from dscluster.runs.preparing.prepare import prepare
from dscluster.runs.preparing.program import auto_note, find_ds_config, hf_ds_config, pointed_at
from dscluster.runs.records.hflog import HfLogBridge, parse_dict
from dscluster.runs.records.request import RunRequest

HF_CONFIG = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
             "gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "bf16": {"enabled": "auto"},
             "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                       "weight_decay": "auto"}},
             "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                               "warmup_num_steps": "auto", "total_num_steps": "auto"}},
             "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}}


def test_hf_spelling_names_the_ds_config():
    assert find_ds_config(["--output_dir", "o", "--deepspeed", "ds.json"]) == "ds.json"
    assert find_ds_config(["--deepspeed=ds.json", "--save_steps", "3"]) == "ds.json"
    assert hf_ds_config(["--deepspeed", "ds.json"]) and not hf_ds_config(["--deepspeed", "--deepspeed_config", "d"])
    assert find_ds_config(["--deepspeed", "--lr", "1"]) is None  # DeepSpeed's own switch
    assert pointed_at(["--deepspeed", "ds.json", "--x"], "/run/ds_config.json") == \
        ["--deepspeed", "/run/ds_config.json", "--x"]
    assert pointed_at(["--deepspeed=ds.json"], "/r/c.json") == ["--deepspeed=/r/c.json"]


def test_auto_values_are_the_trainers_and_the_rest_is_still_checked():
    out = dsconfig.validate(HF_CONFIG, 3, auto_ok=True)
    assert out["train_batch_size"] == "auto" and out["optimizer"]["params"]["lr"] == "auto"
    note = auto_note(out, 3)
    assert "train_batch_size" in note and "batch arithmetic for 3 ranks is left to it" in note
    with pytest.raises(ConfigError, match="auto"):
        dsconfig.validate(HF_CONFIG, 3)  # a plain DeepSpeed script: DeepSpeed itself would fail on "auto"
    for bad, key in (({**HF_CONFIG, "zero_optimization": {"stage": 2, "overlap_com": True}}, "overlap_com"),
                     ({**HF_CONFIG, "train_micro_batch_size_per_gpu": 0}, "train_micro_batch_size_per_gpu"),
                     ({**HF_CONFIG, "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_steps": "auto"}}},
                      "warmup_steps")):
        with pytest.raises(ConfigError) as err:
            dsconfig.validate(bad, 3, auto_ok=True)
        assert key in str(err.value)
    # concrete batch keys beside "auto" ones elsewhere: the arithmetic still applies
    mixed = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "gradient_clipping": "auto"}
    assert dsconfig.validate(mixed, 3, auto_ok=True)["train_batch_size"] == 6


def test_launch_records_the_hf_config_and_gives_the_script_the_runs_copy(dscluster_home, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "ds.json").write_text("// HF's docs write it so\n" + json.dumps(HF_CONFIG))
    prep = prepare(RunRequest.of(command=["train.py", "--output_dir", "out", "--deepspeed", "ds.json"], local=2,
                                 cwd=str(tmp_path)), dry_run=True)
    rec = prep.record
    assert rec.ds_config["zero_optimization"]["stage"] == 2 and rec.ds_config["train_batch_size"] == "auto"
    args = list(rec.launch.ranks_args)
    assert args[args.index("--deepspeed") + 1].endswith("/ds_config.json") and "ds.json" not in args
    copy = json.loads(rec.launch.ds_config_text)
    assert copy["csv_monitor"]["enabled"] and copy["optimizer"]["params"]["lr"] == "auto"


LOG = (
    "[2026-12-03 07:40:01,000] [INFO] [config.py:678:print]   train_batch_size ............. 24\n"
    "  0%|          | 0/20 [00:00<?, ?it/s]\r 10%|#         | 2/20 [00:01<00:09,  2.00it/s]\r"
    "\r                                                  \r"
    "{'loss': '5.546', 'grad_norm': '1.262', 'learning_rate': '0.0003', 'epoch': '0.25'}\n"
    "\r 10%|#         | 2/20 [00:01<00:09,  2.00it/s]\r 20%|##        | 4/20 [00:02<00:08,  2.00it/s]\r"
    "[2026-12-03 07:40:03,000] [INFO] [logging.py:107:log_dist] [Rank 0] Saving model checkpoint: "
    "out/checkpoint-4/global_step4/mp_rank_00_model_states.pt\n"
    "{'eval_loss': 5.5, 'eval_runtime': 0.1, 'epoch': 0.5}\n"
    "\r 20%|##        | 4/20 [00:02<00:08,  2.00it/s]\r"
)


def test_rank0_log_dicts_become_metrics_at_their_step(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "20261203074000_rank0.log").write_text(LOG)
    bridge = HfLogBridge(tmp_path, cwd="/work")
    assert bridge.tick(1) == 2
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows[0] == {"step": 2, "loss": 5.546, "grad_norm": 1.262, "lr": 0.0003, "epoch": 0.25, "source": "hf"}
    assert rows[1]["step"] == 4 and rows[1]["val_loss"] == 5.5
    assert bridge.batch == 24 and bridge.output_dirs == [Path("/work/out")]
    assert json.loads((tmp_path / "resumes" / "attempt-1.json").read_text())["step"] is None  # from scratch
    assert parse_dict("{'a': 1}") is None and parse_dict("{'loss': 1.0}") == {"loss": 1.0}
    (tmp_path / "logs" / "20261203074000_rank0.log").open("a").write("{'loss': 2.5, 'step': 6}\n")
    bridge.tick(1)
    assert json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[-1]) == \
        {"step": 6, "loss": 2.5, "source": "hf"}  # a dict naming its own step (Accelerate scripts print them)


def test_a_resumed_attempt_is_recorded_from_deepspeeds_load_line(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "x_rank0.log").write_text(
        "[Rank 0] [Torch] Begin Load checkpoint from /w/out/checkpoint-10/global_step10/mp_rank_00_model_states.pt...\n"
        "{'loss': 1.0, 'epoch': 1.0}\n")
    HfLogBridge(tmp_path).tick(2, final=True)
    got = json.loads((tmp_path / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] == "checkpoint-10" and got["step"] == 10 and got["hf"]


def _hf_checkpoint(folder: Path, step: int, ranks: int = 2, state: bool = True) -> Path:
    d = folder / f"checkpoint-{step}"
    (d / f"global_step{step}").mkdir(parents=True)
    (d / "model.safetensors").write_bytes(b"x" * 16)
    (d / "latest").write_text(f"global_step{step}")
    (d / f"global_step{step}" / "mp_rank_00_model_states.pt").write_bytes(b"m")
    for r in range(ranks):
        (d / f"global_step{step}" / f"bf16_zero_pp_rank_{r}_mp_rank_00_optim_states.pt").write_bytes(b"o")
    if state:
        (d / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return d


def test_checkpoints_are_complete_or_torn_and_torn_ones_move_aside(tmp_path):
    out = tmp_path / "out"
    _hf_checkpoint(out, 10)
    _hf_checkpoint(out, 20, state=False)
    _hf_checkpoint(out, 30, ranks=1)  # rank 1's optimizer shard never written
    judged = {c.step: c for c in hfckpt.checkpoints(out, world_size=2)}
    assert judged[10].complete and not judged[20].complete and "trainer_state.json" in judged[20].why
    assert not judged[30].complete and "optimizer shards" in judged[30].why
    assert hfckpt.newest_complete(out, 2).step == 10
    moved = hfckpt.move_torn(out, 2)
    assert sorted(src.name for src, _ in moved) == ["checkpoint-20", "checkpoint-30"]
    assert all(dst.parent == out / ".torn" and dst.is_dir() for _, dst in moved)  # kept, never deleted
    assert [p.name for p in out.iterdir() if p.name.startswith("checkpoint-")] == ["checkpoint-10"]
    # HF's own resume now finds the complete one
    get_last_checkpoint = pytest.importorskip("transformers.trainer_utils").get_last_checkpoint

    assert Path(get_last_checkpoint(str(out))).name == "checkpoint-10"


def test_the_commit_marker_is_exact(tmp_path):
    d = _hf_checkpoint(tmp_path, 5)
    hfckpt.write_commit(d)
    assert hfckpt.judge(d).exact and hfckpt.judge(d).complete
    (d / "model.safetensors").write_bytes(b"short")
    assert not hfckpt.judge(d).complete and "changed size" in hfckpt.judge(d).why


def test_an_attempt_is_explained_from_its_own_part_of_the_logs(tmp_path):
    from dscluster.runs.supervising.verdict import Failure, explain_failure

    log = tmp_path / "launcher.log"
    first = "attempt 1: ...\nnode2: [rank1] Traceback ...\nnode2: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    log.write_text(first + "attempt 2: ...\nnode1: FileNotFoundError: [Errno 2] No such file or directory: "
                   "'out/checkpoint-60/trainer_state.json'\n")
    since = {log: len(first)}
    exp = explain_failure(Failure("rank-failed", "x"), log, {log: log.stat().st_size}, 0.0, 1, since=since)
    assert exp is None or "memory" not in (exp.cause or "").lower()
    old = explain_failure(Failure("rank-failed", "x"), log, {log: log.stat().st_size}, 0.0, 1)
    assert old is not None and "memory" in old.cause.lower()  # without `since`: attempt 1's ending is taken


def test_the_progress_bar_tells_a_resume_from_a_fresh_start(tmp_path):
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "a_rank0.log"
    log.write_text("  0%|          | 0/12 [00:00<?, ?it/s]\r 42%|####      | 5/12 [00:01<00:02,  2.00it/s]\r")
    bridge = HfLogBridge(tmp_path)
    bridge.expected[2] = 4  # checkpoint-4 was complete when attempt 2 started
    bridge.tick(2)
    assert json.loads((tmp_path / "resumes" / "attempt-2.json").read_text())["tag"] == "checkpoint-4"
    other = tmp_path / "b"
    (other / "logs").mkdir(parents=True)
    (other / "logs" / "a_rank0.log").write_text("  8%|#         | 1/12 [00:01<00:11,  1.00it/s]\r")
    bridge = HfLogBridge(other)
    bridge.expected[2] = 4
    bridge.tick(2)
    got = json.loads((other / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] is None and got["step"] is None  # it started from scratch, although checkpoint-4 was there


def test_status_ckpt_and_the_panel_list_the_trainers_checkpoints(dscluster_home, tmp_path, monkeypatch, capsys):
    from dscluster.cli import main
    from dscluster.jupyter import rundata
    from dscluster.runs.records import store
    from dscluster.runs.records.record import RunRecord

    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    work = tmp_path / "work"
    _hf_checkpoint(work / "out", 4)
    _hf_checkpoint(work / "out", 8, state=False)
    record = RunRecord.from_json({"id": store.new_run_id("hf"), "name": "hf", "argv": ["t.py"], "env": {},
                                  "world_size": 2, "status": "running",
                                  "launch": {"program": "t.py", "args": ["--output_dir", "out", "--deepspeed", "d.json"],
                                             "hosts": [], "cwd": str(work)}})
    run_dir = store.create_run(tmp_path / "shared", record)
    main(["ckpt", run_dir.name, "--json"])
    listed = {c["name"]: c for c in json.loads(capsys.readouterr().out) if c.get("hf")}
    assert listed["checkpoint-4"]["complete"] and not listed["checkpoint-8"]["complete"]
    main(["status", run_dir.name])
    shown = capsys.readouterr().out
    assert "checkpoint-4" in shown and "torn: trainer_state.json is missing" in shown
    panel = {c["tag"]: c for c in rundata.checkpoints(rundata.RunRef(run_dir.name, run_dir))}
    assert panel["checkpoint-4"]["committed"] and panel["checkpoint-4"]["latest"]
    assert not panel["checkpoint-8"]["committed"] and "trainer_state.json" in panel["checkpoint-8"]["torn"]


def test_status_explains_the_run_by_the_attempt_that_ended_it(dscluster_home, tmp_path, monkeypatch, capsys):
    from dscluster import explain
    from dscluster.cli import main
    from dscluster.runs.records import store
    from dscluster.runs.records.record import RunRecord

    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    exp = {**explain.custom("rank-exit", "A training process exited with code {code}; DeepSpeed's launcher then "
                            "stopped the others.", "Read its log.", "exit 1", code="1").to_dict(), "attempt": 2}
    record = RunRecord.from_json({
        "id": store.new_run_id("hf"), "name": "hf", "argv": ["t.py"], "env": {}, "world_size": 3, "status": "failed",
        "exit_code": 1, "explanation": exp, "launch": {"program": "t.py", "hosts": []},
        "attempts": [{"n": 1, "exit_code": 1, "reason": "rank 0 on node1 killed by SIGKILL"},
                     {"n": 2, "exit_code": 1, "reason": "exit 1 on node1"}]})
    run_dir = store.create_run(tmp_path / "shared", record)
    main(["status", run_dir.name])
    shown = capsys.readouterr().out
    assert "cause (attempt 2): A training process exited with code 1" in shown
    assert "killed by SIGKILL" in shown.split("attempt 1:")[1].split("\n")[0]  # the earlier ending, beside it


def test_accelerates_env_spelling_names_the_ds_config_too(dscluster_home, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "ds.json").write_text(json.dumps(HF_CONFIG))
    prep = prepare(RunRequest.of(command=["train.py"], local=2, cwd=str(tmp_path),
                                 env=["ACCELERATE_USE_DEEPSPEED=true", "ACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json"]),
                   dry_run=True)
    rec = prep.record
    assert rec.ds_config["zero_optimization"]["stage"] == 2
    assert rec.launch.env["ACCELERATE_DEEPSPEED_CONFIG_FILE"].endswith(f"{rec.id}/ds_config.json")
    assert json.loads(rec.launch.ds_config_text)["csv_monitor"]["enabled"]
    (tmp_path / "ds.json").write_text(json.dumps({**HF_CONFIG, "zero_optimization": {"stage": 7}}))
    with pytest.raises(ConfigError, match="stage"):
        prepare(RunRequest.of(command=["train.py"], local=2, cwd=str(tmp_path),
                              env=["ACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json"]), dry_run=True)

"""What `dscluster launch` checks before anything starts, and the run record it prepares (no processes)."""

import json
from pathlib import Path

import pytest

from dscluster import cli
from dscluster.errors import ConfigError, ExitCode
from dscluster.runs.preparing.prepare import dry_run_text, prepare
from dscluster.runs.records.request import RunRequest

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")


def test_local_record_is_complete_and_secret_free(dscluster_home, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2}))
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed", "--deepspeed_config", str(cfg)], local=2,
                                 env=["HF_TOKEN=hf_x", "OMP_NUM_THREADS=1"], name="t", cwd=str(tmp_path)))
    rec = prep.record.to_json()
    assert rec["id"].startswith("t-") and rec["world_size"] == 2 and rec["cluster"] == "local"
    assert rec["ds_config"]["train_batch_size"] == 8  # resolved for the real world size
    assert rec["env"] == {"HF_TOKEN": "***", "OMP_NUM_THREADS": "1"}
    assert prep.secrets == {"HF_TOKEN": "hf_x"} and "hf_x" not in json.dumps(rec)
    text = dry_run_text(prep)
    assert "dscluster.launcher.locallaunch" in text and "--devices=0,1" in text and "hf_x" not in text
    assert "DSCLUSTER_RUN_ID=" + rec["id"] in text


def test_invalid_ds_config_is_refused_naming_the_key(dscluster_home, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps({"train_batch_size": 7, "train_micro_batch_size_per_gpu": 2,
                               "gradient_accumulation_steps": 1}))
    with pytest.raises(ConfigError) as err:
        prepare(RunRequest.of(command=[SCRIPT, "--deepspeed_config", str(cfg)], local=2, cwd=str(tmp_path)))
    assert "train_batch_size" in str(err.value)


def test_cli_refuses_bad_input_before_starting_anything(dscluster_home, tmp_path, capsys):
    assert cli.main(["launch", "--local", "1", "--detach", str(tmp_path / "missing.py")]) == ExitCode.CONFIG
    assert cli.main(["launch", "--local", "1", "--detach", "-m", "no_such_module_h4"]) == ExitCode.CONFIG
    assert cli.main(["launch", "--local", "1", "--detach", "--env", "NOPE", SCRIPT]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "does not exist" in err and "cannot be imported" in err and "NOPE is not set in this environment" in err
    assert not (tmp_path / "shared" / "runs").exists()
    assert cli.main(["launch", "--local", "1", "--dry-run", SCRIPT, "--steps", "2"]) == ExitCode.OK
    assert "--steps 2" in capsys.readouterr().out
    assert not (tmp_path / "shared" / "runs").exists()  # a dry run starts nothing and records nothing


def test_the_reference_trainers_arguments_are_checked_before_a_launch(dscluster_home, tmp_path, capsys):
    for args, words in ((["--steps", "-5"], "--steps must be positive"), (["--preset", "nosuch"], "unknown preset"),
                        (["--bogus", "1"], "unrecognized arguments: --bogus 1")):
        assert cli.main(["launch", "--local", "1", "--detach", "-m", "dscluster.train", *args]) == ExitCode.CONFIG
        assert words in capsys.readouterr().err
    assert not (tmp_path / "shared" / "runs").exists()

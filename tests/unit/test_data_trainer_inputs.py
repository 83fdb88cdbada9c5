"""Bad trainer input stops in plan(), before any process group exists, with the setting and the fix."""

from __future__ import annotations

import json

import pytest

from dscluster.data.prepare import prepare
from dscluster.data.tokenizer import ByteTokenizer
from dscluster.errors import ConfigError, DataError, DsclusterError, PermissionNeeded
from dscluster.train.__main__ import main as trainer_main
from dscluster.train.trainer import plan


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("trainer-inputs")
    src = root / "src.txt"
    src.write_text("def f(x):\n    return x\n" * 400)
    prepare([src], root / "data", ByteTokenizer())
    return root / "data"


@pytest.fixture
def world2(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")


def _args(data, tmp_path, *extra):
    return ["--data", str(data), "--run-dir", str(tmp_path / "run"), "--seq-len", "32", *extra]


def _config(tmp_path, cfg: dict) -> str:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_a_good_plan(data, tmp_path, world2):
    p = plan(_args(data, tmp_path, "--deepspeed", "--deepspeed_config",
                   _config(tmp_path, {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2})))
    assert p.world_size == 2 and p.ds_config["train_batch_size"] == 8 and p.resume_step is None
    assert p.model_cfg.seq_len == 32 and p.model_cfg.vocab_size == 257
    assert p.device_type != "cpu" or "optimizer" not in p.ds_config  # CPU: torch AdamW, no JIT op


@pytest.mark.parametrize("extra,error,setting", [
    (["--preset", "125m"], ConfigError, "--preset"),
    (["--fault", "explode"], ConfigError, "--fault"),
    (["--steps", "0"], ConfigError, "--steps"),
    (["--resume", "step-x"], ConfigError, "--resume"),
    (["--lr", "inf"], ConfigError, "--lr"),
    (["--step-sleep", "-1"], ConfigError, "--step-sleep"),
    (["--step-sleep", "nan"], ConfigError, "--step-sleep"),
])
def test_bad_options(data, tmp_path, world2, extra, error, setting):
    with pytest.raises(error) as err:
        plan(_args(data, tmp_path, *extra))
    assert err.value.setting == setting and err.value.hint


def test_missing_data_dir(tmp_path, world2):
    with pytest.raises(DataError) as err:
        plan(_args(tmp_path / "no-such-data", tmp_path))
    assert err.value.setting == "--data"


def test_typo_and_inconsistent_batch_in_config(data, tmp_path, world2):
    with pytest.raises(ConfigError) as err:
        plan(_args(data, tmp_path, "--deepspeed_config",
                   _config(tmp_path, {"train_micro_batch_size_per_gpu": 2, "zero_optimisation": {"stage": 1}})))
    assert "zero_optimization" in err.value.hint
    with pytest.raises(ConfigError) as err:
        plan(_args(data, tmp_path, "--deepspeed_config",
                   _config(tmp_path, {"train_batch_size": 6, "train_micro_batch_size_per_gpu": 2,
                                      "gradient_accumulation_steps": 1})))
    assert err.value.setting == "train_batch_size" and "world size 2" in err.value.message


def test_unwritable_checkpoint_dir(data, tmp_path, world2):
    (tmp_path / "f").write_text("")
    with pytest.raises(PermissionNeeded) as err:
        plan(_args(data, tmp_path, "--save-dir", str(tmp_path / "f" / "ckpt")))
    assert err.value.setting == "--save-dir"


def test_main_prints_message_and_fix_without_traceback(data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    rc = trainer_main(_args(data, tmp_path, "--preset", "huge"))
    err = capsys.readouterr().err
    assert rc == ConfigError.exit_code and rc != 0
    assert "[rank 1] error: unknown preset 'huge'" in err and "fix:" in err and "Traceback" not in err
    assert issubclass(ConfigError, DsclusterError)


@pytest.mark.parametrize("env,words", [
    ({"WORLD_SIZE": "2"}, "RANK not set"),
    ({"RANK": "1", "WORLD_SIZE": "1"}, "RANK=1 with WORLD_SIZE=1"),
    ({"RANK": "abc"}, "RANK='abc' is not a whole number"),
])
def test_half_a_launcher_environment_is_named(env, words):
    from dscluster.train.trainer import launcher_env

    with pytest.raises(ConfigError, match=words.replace("(", r"\(")) as err:
        launcher_env(env)
    assert "dscluster launch" in err.value.hint
    assert launcher_env({}) == (0, 1) and launcher_env({"RANK": "1", "WORLD_SIZE": "2"}) == (1, 2)


def test_a_file_given_as_the_data_directory_is_named_as_a_file(tmp_path):
    from dscluster.data.shards import read_meta
    from dscluster.errors import DataError

    (tmp_path / "corpus.txt").write_text("text")
    with pytest.raises(DataError, match="is a file, not a prepared data directory"):
        read_meta(tmp_path / "corpus.txt")

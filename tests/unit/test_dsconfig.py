"""ds_config validation: every error names the key and the fix, before anything starts."""

from __future__ import annotations

import pytest

from dscluster import dsconfig
from dscluster.errors import ConfigError

BASE = {"train_micro_batch_size_per_gpu": 4}


def _err(config: dict, world: int = 2) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        dsconfig.validate(config, world)
    return err.value


@pytest.mark.parametrize("given,world,want", [
    ({"train_micro_batch_size_per_gpu": 4}, 2, (8, 4, 1)),
    ({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 3}, 2, (24, 4, 3)),
    ({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4}, 4, (32, 4, 2)),
    ({"train_batch_size": 32, "gradient_accumulation_steps": 2}, 4, (32, 4, 2)),
    ({"train_batch_size": 32}, 8, (32, 4, 1)),
    ({"train_batch_size": 24, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 3}, 2, (24, 4, 3)),
])
def test_batch_values_are_filled_in_like_deepspeed(given, world, want):
    out = dsconfig.validate(given, world)
    assert (out["train_batch_size"], out["train_micro_batch_size_per_gpu"], out["gradient_accumulation_steps"]) == want
    assert "gradient_accumulation_steps" not in given or given == {k: out[k] for k in given}  # input untouched


def test_inconsistent_batch_names_the_key_and_the_right_value():
    err = _err({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}, world=2)
    assert err.setting == "train_batch_size" and "16" in err.message and "world size 2" in err.message
    assert "8" in err.hint


def test_a_data_parallel_size_below_the_world_is_taken_as_written():
    """Pipeline stages or tensor parallelism leave DeepSpeed fewer data-parallel ranks than the world (2 stages on
    4 ranks: 2); the config says neither, so three keys that agree with a divisor of the world are kept."""
    given = {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2}
    out = dsconfig.validate(given, 4)
    assert {k: out[k] for k in given} == given
    assert dsconfig.validate({**given, "train_batch_size": 4}, 4)["train_batch_size"] == 4  # 4 stages: 1 data rank
    err = _err({**given, "train_batch_size": 12}, world=4)  # 3 data ranks do not divide 4: refused as before
    assert err.setting == "train_batch_size" and "16" in err.hint and "pipeline" in err.hint


def test_floor_division_trap_is_caught():
    err = _err({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 3}, world=8)  # DeepSpeed: 100 != 96
    assert err.setting == "train_batch_size" and "multiple of 24" in err.hint


def test_no_batch_size_at_all():
    assert _err({}).setting == "train_micro_batch_size_per_gpu"


@pytest.mark.parametrize("value", [0, -1, 2.5, "4", True])
def test_batch_values_must_be_positive_ints(value):
    assert _err({"train_micro_batch_size_per_gpu": value}).setting == "train_micro_batch_size_per_gpu"


def test_typo_at_top_level_suggests_the_key():
    err = _err({**BASE, "gradient_clippng": 1.0})
    assert err.setting == "gradient_clippng" and "gradient_clipping" in err.hint


def test_auto_values_are_refused_with_their_path():
    err = _err({**BASE, "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}})
    assert err.setting == "zero_optimization.reduce_bucket_size" and "auto" in err.message


def test_removed_keys():
    err = _err({**BASE, "elasticity": {"enabled": True}})
    assert err.setting == "elasticity" and "removed" in err.message and "delete" in err.hint
    assert _err({**BASE, "zero_optimization": {"stage": 3, "mics_shard_size": 8}}).setting == "zero_optimization.mics_shard_size"


def test_zero_section():
    assert _err({**BASE, "zero_optimization": {"stage": 5}}).setting == "zero_optimization.stage"
    err = _err({**BASE, "zero_optimization": {"stage": 2, "overlap_com": True}})
    assert err.setting == "zero_optimization.overlap_com" and "overlap_comm" in err.hint


def test_precision_clipping_optimizer():
    assert _err({**BASE, "fp16": {"enabled": True}, "bf16": {"enabled": True}}).setting == "fp16"
    assert _err({**BASE, "gradient_clipping": -1}).setting == "gradient_clipping"
    assert _err({**BASE, "optimizer": {"params": {"lr": 1}}}).setting == "optimizer.type"


def test_optimizer_type_and_adam_params():
    # each of these starts fine and then dies in every rank (AttributeError / TypeError) without the check
    err = _err({**BASE, "optimizer": {"type": "Adamm", "params": {}}})
    assert err.setting == "optimizer.type" and "did you mean 'Adam'" in err.hint
    err = _err({**BASE, "optimizer": {"type": "sgd", "params": {}}})
    assert err.setting == "optimizer.type" and "did you mean 'SGD'" in err.hint
    err = _err({**BASE, "optimizer": {"type": "adamw", "params": {"learning_rate": 1e-3}}})
    assert err.setting == "optimizer.params.learning_rate" and "did you mean 'lr'" in err.hint
    err = _err({**BASE, "optimizer": {"type": "AdamW", "params": {"weight_decy": 0.1}}})
    assert err.setting == "optimizer.params.weight_decy" and "'weight_decay'" in err.hint
    for ok in ({"type": "SGD", "params": {"lr": 0.1, "momentum": 0.9}}, {"type": "ADAM", "params": {"lr": 1e-3}},
               {"type": "Lamb", "params": {"lr": 1e-3, "max_coeff": 10.0}}):
        dsconfig.validate({**BASE, "optimizer": ok}, 2)


def test_scheduler_checks():
    err = _err({**BASE, "scheduler": {"type": "WarmupDecay", "params": {}}})
    assert err.setting == "scheduler.type" and "WarmupDecayLR" in err.hint
    err = _err({**BASE, "scheduler": {"type": "WarmupLR", "params": {"warmup_num_step": 10}}})
    assert err.setting == "scheduler.params.warmup_num_step" and "warmup_num_steps" in err.hint
    err = _err({**BASE, "scheduler": {"type": "WarmupCosineLR", "params": {"warmup_num_steps": 10}}})
    assert err.setting == "scheduler.params.total_num_steps"


def test_a_full_valid_config_passes():
    cfg = {**BASE, "gradient_accumulation_steps": 2, "bf16": {"enabled": True}, "gradient_clipping": 1.0,
           "zero_optimization": {"stage": 3, "overlap_comm": True, "offload_optimizer": {"device": "cpu"}},
           "optimizer": {"type": "AdamW", "params": {"lr": 3e-4}},
           "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": 100, "warmup_num_steps": 10}}}
    assert dsconfig.validate(cfg, 16)["train_batch_size"] == 128


def test_load_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        dsconfig.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "train_batch_size": 8\n  "x": [1,\n}\n')
    with pytest.raises(ConfigError, match=r"bad.json:\d+:\d+: not a valid DeepSpeed config"):
        dsconfig.load(bad)
    dup = tmp_path / "dup.json"
    dup.write_text('{"train_batch_size": 8, "train_batch_size": 16}')
    with pytest.raises(ConfigError, match="appears twice"):
        dsconfig.load(dup)
    good = tmp_path / "good.json"
    good.write_text('{"train_micro_batch_size_per_gpu": 2}')
    assert dsconfig.load(good) == {"train_micro_batch_size_per_gpu": 2}


@pytest.mark.parametrize("extra,setting,words", [
    ({"fp16": True}, "fp16", '"fp16": {"enabled": true}'),
    ({"bf16": {"enabled": "false"}}, "bf16.enabled", '"enabled": false without quotes'),
    ({"scheduler": "WarmupLR"}, "scheduler", '"scheduler": {"type": "WarmupLR"'),
])
def test_sections_of_the_wrong_shape_are_named_with_an_example(extra, setting, words):
    err = _err({**BASE, **extra})
    assert err.setting == setting and words in err.hint, (err.message, err.hint)


def test_a_launch_names_the_config_file_that_holds_the_bad_key(tmp_path):
    from dscluster.runs.preparing.program import check_ds_config

    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": 5}')
    with pytest.raises(ConfigError) as err:
        check_ds_config(["--deepspeed_config", "ds.json"], tmp_path, 1)
    assert err.value.message.startswith(f"{tmp_path / 'ds.json'}: zero_optimization must be an object")


@pytest.mark.parametrize("params,setting", [
    ({"lr": -1}, "optimizer.params.lr"), ({"lr": "3e-4"}, "optimizer.params.lr"),
    ({"weight_decay": -0.1}, "optimizer.params.weight_decay"), ({"betas": [0.9]}, "optimizer.params.betas"),
    ({"betas": [0.9, 1.0]}, "optimizer.params.betas"), ({"eps": 0}, "optimizer.params.eps"),
])
def test_optimizer_values_are_checked_before_torch_sees_them(params, setting):
    err = _err({**BASE, "optimizer": {"type": "AdamW", "params": params}})
    assert err.setting == setting and "e.g." in err.hint
    dsconfig.validate({**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95]}}}, 2)

"""FP8 training's wiring without a GPU or torchao: who is refused, with which setting and fix, before
any process group exists; which layers would be converted; the option on the command line."""

from __future__ import annotations

import importlib.util

import pytest
from torch import nn

from dscluster.errors import ConfigError
from dscluster.train import fp8
from dscluster.train.model import GPT, preset_config
from dscluster.train.options import check_args


@pytest.mark.parametrize("env,words", [
    (fp8.Fp8Env("cpu", None, None, "0.17.0"), "CPU"),
    (fp8.Fp8Env("cuda", (8, 0), "NVIDIA A100-SXM4-80GB", "0.17.0"), "A100-SXM4-80GB is 8.0"),
    (fp8.Fp8Env("cuda", (7, 0), "Tesla V100", "0.17.0"), "compute capability 8.9"),
    (fp8.Fp8Env("cuda", (9, 0), "NVIDIA H200", None), "torchao"),
    (fp8.Fp8Env("cuda", (9, 0), "NVIDIA H200", "0.17.0", half="fp16"), "fp16"),
])
def test_refused_where_fp8_cannot_run_naming_the_setting_and_a_fix(env, words):
    err = fp8.refusal(env)
    assert isinstance(err, ConfigError) and err.setting == "--precision"
    assert words in str(err) and err.hint


@pytest.mark.parametrize("env", [fp8.Fp8Env("cuda", (9, 0), "NVIDIA H200", "0.17.0"),
                                 fp8.Fp8Env("cuda", (8, 9), "NVIDIA L40S", "0.16.0"),
                                 fp8.Fp8Env("cuda", (10, 0), "NVIDIA B200", "0.17.0")])
def test_hopper_ada_and_later_with_torchao_may_run_it(env):
    assert fp8.refusal(env) is None


def test_this_machine_is_refused_before_anything_starts():
    """Here (CPU, no torchao in CI) check() raises; on a GPU machine it would pass or name its reason."""
    env = fp8.probe()
    if env.device_type == "cpu":
        with pytest.raises(ConfigError, match="CPU"):
            fp8.check()


def test_every_transformer_linear_is_eligible_and_odd_sizes_are_not():
    model = GPT(preset_config("tiny"))
    eligible = [n for n, m in model.named_modules() if fp8.fp8_eligible(m, n)]
    assert len(eligible) == 4 * model.cfg.n_layer  # qkv, proj, gate_up, down in each block
    assert not fp8.fp8_eligible(nn.Linear(100, 64)) and not fp8.fp8_eligible(nn.Embedding(64, 64))


def test_the_option_parses_and_unknown_precisions_are_named():
    check_args(["--precision", "fp8"])
    with pytest.raises(ConfigError, match="--precision"):
        check_args(["--precision", "fp4"])


@pytest.mark.skipif(importlib.util.find_spec("torchao") is not None, reason="torchao installed here")
def test_without_torchao_the_trainer_plan_is_refused_on_any_machine(tmp_path):
    from dscluster.data.prepare import prepare
    from dscluster.data.tokenizer import ByteTokenizer
    from dscluster.train.trainer import plan

    src = tmp_path / "src.txt"
    src.write_text("def f(x):\n    return x\n" * 400)
    prepare([src], tmp_path / "data", ByteTokenizer())
    with pytest.raises(ConfigError) as err:
        plan(["--data", str(tmp_path / "data"), "--run-dir", str(tmp_path / "run"), "--seq-len", "32",
              "--precision", "fp8"])
    assert err.value.setting == "--precision"

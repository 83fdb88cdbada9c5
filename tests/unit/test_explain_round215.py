"""Round 215's rules (issue 45, live: optimizer parameter groups and optimizer state in a user's training script): a
param group's parameters in a set (optim-params-set), names or other non-tensors in a group (optim-params-not-tensors),
a group dict without its "params" key (optim-group-no-params-key), named and unnamed groups mixed
(optim-params-named-mixed), a group's lr / weight_decay / eps that is a string or None when step() computes with it
(optim-group-hyperparam-not-number), a LambdaLR given another number of functions than the optimizer has groups
(sched-per-group-count), add_param_group on DeepSpeed's optimizer (ds-optimizer-add-param-group), a torch optimizer's
state_dict loaded into it (ds-optimizer-load-torch-state) and a param group's parameter outside the model under ZeRO-3
(zero3-optimizer-param-outside-model). The cases' own logs, second wordings and near misses that must stay off them"""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("optim-params-set", "optim-params-not-tensors", "optim-group-hyperparam-not-number", "sched-per-group-count",
       "ds-optimizer-add-param-group", "ds-optimizer-load-torch-state", "zero3-optimizer-param-outside-model",
       "optim-group-no-params-key", "optim-params-named-mixed")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-pgroup-set-params", "optim-params-set"),
    ("live-pgroup-names-not-tensors", "optim-params-not-tensors"),
    ("live-pgroup-yaml-lr-string", "optim-group-hyperparam-not-number"),
    ("live-pgroup-resume-unfrozen", "ckpt-optimizer-groups-mismatch"),
    ("live-pgroup-lambda-count", "sched-per-group-count"),
    ("live-pgroup-add-after-init", "ds-optimizer-add-param-group"),
    ("live-pgroup-torch-state-into-zero", "ds-optimizer-load-torch-state"),
    ("live-pgroup-generator-twice", "optimizer-empty-params"),
    ("live-pgroup-criterion-param-zero3", "zero3-optimizer-param-outside-model"),
    ("live-pgroup-name-split-overlap", "optim-param-in-two-groups"),
    ("live-pgroup-params-key-typo", "optim-group-no-params-key"),
    ("live-pgroup-mixed-named", "optim-params-named-mixed"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_SGD = '  File "/opt/venv/lib/python3.11/site-packages/torch/optim/sgd.py", line 390, in _single_tensor_sgd\n'
_ADAM = '  File "/opt/venv/lib/python3.11/site-packages/torch/optim/adam.py", line 431, in _single_tensor_adam\n'


@pytest.mark.parametrize("text, name", [
    # a module given in a group's list
    (_TB + "TypeError: optimizer can only optimize Tensors, but one of the params is torch.nn.modules.linear.Linear\n",
     "optim-params-not-tensors"),
    # SGD's lr from argparse without type=float
    (_TB + _SGD + "    param.add_(grad, alpha=-lr)\n                            ^^^\n"
     "TypeError: bad operand type for unary -: 'str'\n", "optim-group-hyperparam-not-number"),
    # SGD's per-group weight_decay a string
    (_TB + _SGD + "    grad = grad.add(param, alpha=weight_decay)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "TypeError: add(): argument 'alpha' must be Number, not str\n", "optim-group-hyperparam-not-number"),
    # Adam's per-group eps a string
    (_TB + _ADAM + "    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)\n"
     "TypeError: add_(): argument 'other' (position 1) must be Tensor, not str\n", "optim-group-hyperparam-not-number"),
    # a group's lr None
    (_TB + _ADAM + "    param.mul_(1 - lr * weight_decay)\n                   ~~~^~~~~~~~~~~~~~\n"
     "TypeError: unsupported operand type(s) for *: 'NoneType' and 'float'\n", "optim-group-hyperparam-not-number"),
    # ZeRO-3's optimizer given a torch optimizer's state_dict
    (_TB + '  File "/opt/deepspeed/runtime/zero/stage3.py", line 3628, in load_state_dict\n'
     "    self._rigid_load_state_dict(state_dict_list[dist.get_rank(group=self.dp_process_group)],\n"
     "KeyError: 1\n", "ds-optimizer-load-torch-state"),
    # add_param_group on the engine itself
    (_TB + "AttributeError: 'DeepSpeedEngine' object has no attribute 'add_param_group'\n",
     "ds-optimizer-add-param-group"),
    # named and unnamed parameters inside one group
    (_TB + "ValueError: all optimizer params should be with/without names. Some param names are missing\n",
     "optim-params-named-mixed"),
    # OneCycleLR's max_lr list
    (_TB + "ValueError: expected 3 values for max_lr, got 2\n", "sched-per-group-count"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text", [
    # the optimizer given a single tensor, not a set
    _TB + "TypeError: params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
          "torch.FloatTensor\n",
    # a non-leaf tensor in a group
    _TB + "ValueError: can't optimize a non-leaf Tensor\n",
    # the user's own arithmetic with a string, outside torch.optim
    _TB + '  File "train.py", line 12, in warmup\n    return base_lr * step / warmup\n'
          "TypeError: can't multiply sequence by non-int of type 'float'\n",
    # a DeepSpeed checkpoint folder of another data-parallel size: the list is shorter, an IndexError
    _TB + '  File "/opt/deepspeed/runtime/zero/stage_1_and_2.py", line 3718, in _load_legacy_checkpoint\n'
          "    current_rank_sd = state_dict_list[dp_rank]\nIndexError: list index out of range\n",
    # ZeRO-3's hooks meeting a layer added after initialize: zero3-param-not-registered's
    _TB + "AttributeError: 'Parameter' object has no attribute 'ds_active_sub_modules'\n",
    # another attribute missing on DeepSpeed's optimizer
    _TB + "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'zero_grad_'\n",
    # a KeyError of the user's own config, not a group's key
    _TB + '  File "train.py", line 30, in build\n    params = cfg["params"]\n'
          "KeyError: 'params'\n",
    # SequentialLR's milestones, another count
    _TB + "ValueError: Sequential Schedulers expects number of schedulers provided to be one more than the number of "
          "milestone points, but got number of schedulers 3 and the number of milestones to be equal to 3\n",
])
def test_near_misses(text):
    assert sig(text) not in NEW

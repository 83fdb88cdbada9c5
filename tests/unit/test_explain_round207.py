"""Round 207's rules (issue 45, live: learning-rate schedulers and the DeepSpeed config's optimizer and scheduler
sections): ReduceLROnPlateau.step() without its metric (plateau-step-no-metric), a LambdaLR function returning None
(lr-lambda-not-a-number), SequentialLR given a milestone per scheduler (sequentiallr-milestones-count), LinearLR's
start_factor=0 (linearlr-factor-range), scheduler.params that scheduler.type does not take (ds-scheduler-params), a
step function given to deepspeed.initialize as lr_scheduler (ds-lr-scheduler-step-function) and param groups in
initialize's optimizer place (ds-optimizer-given-parameters); the preflight's check of a torch scheduler named in
ds_config. The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import dsconfig
from dscluster.errors import ConfigError

NEW = ("plateau-step-no-metric", "lr-lambda-not-a-number", "sequentiallr-milestones-count", "linearlr-factor-range",
       "ds-scheduler-params", "ds-lr-scheduler-step-function", "ds-optimizer-given-parameters")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-sched-plateau-step-no-metric", "plateau-step-no-metric"),
    ("live-sched-lambdalr-returns-none", "lr-lambda-not-a-number"),
    ("live-sched-sequentiallr-milestones-count", "sequentiallr-milestones-count"),
    ("live-sched-linearlr-start-factor-zero", "linearlr-factor-range"),
    ("live-ds-sched-warmupcosine-warmuplr-params", "ds-scheduler-params"),
    ("live-ds-sched-lr-lambda-as-scheduler", "ds-lr-scheduler-step-function"),
    ("live-ds-sched-built-on-zero-optimizer", "scheduler-not-optimizer"),
    ("live-ds-optim-max-grad-norm", "ds-max-grad-norm"),
    ("live-ds-optim-param-groups-as-optimizer", "ds-optimizer-given-parameters"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_TORCH = "/usr/local/lib/python3.10/dist-packages/torch/optim/lr_scheduler.py"
_DS = "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py"


@pytest.mark.parametrize("text, name", [
    # an older Python's traceback, no caret line; MultiplicativeLR's product
    (_TB + f'  File "{_TORCH}", line 350, in get_lr\n    return [group["lr"] * lmbda(self.last_epoch)\n'
     "TypeError: unsupported operand type(s) for *: 'float' and 'NoneType'\n", "lr-lambda-not-a-number"),
    # LinearLR's end factor
    (_TB + f'  File "{_TORCH}", line 760, in __init__\n    raise ValueError(\n'
     "ValueError: Ending multiplicative factor expected to be between 0 and 1.\n", "linearlr-factor-range"),
    # a torch scheduler named in ds_config without its required argument
    (_TB + f'  File "{_DS}", line 1002, in _scheduler_from_config\n'
     "    instantiated_scheduler = scheduler(optimizer, **scheduler_params)\n"
     "TypeError: CosineAnnealingLR.__init__() missing 1 required positional argument: 'T_max'\n", "ds-scheduler-params"),
    # OneCycle given torch's OneCycleLR names
    (_TB + f'  File "{_DS}", line 1002, in _scheduler_from_config\n'
     "    instantiated_scheduler = scheduler(optimizer, **scheduler_params)\n"
     "                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "TypeError: OneCycle.__init__() got an unexpected keyword argument 'max_lr'\n", "ds-scheduler-params"),
    # a step function comparing the optimizer with the warmup length
    (_TB + f'  File "{_DS}", line 960, in _configure_lr_scheduler\n'
     "    self.lr_scheduler = self.client_lr_scheduler(self.basic_optimizer)\n"
     '  File "train.py", line 12, in <lambda>\n    lr_scheduler=lambda s: 1.0 if s > 100 else s / 100,\n'
     "TypeError: '>' not supported between instances of 'FusedAdam' and 'int'\n", "ds-lr-scheduler-step-function"),
    # model.parameters() passed as the optimizer
    ("AssertionError: Client Optimizer is of unexpected type <class 'generator'>\n", "ds-optimizer-given-parameters"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # the user's own product with None, not the scheduler's lr_lambda
    (_TB + '  File "train.py", line 30, in main\n    lr = base_lr * factor\n'
     "TypeError: unsupported operand type(s) for *: 'float' and 'NoneType'\n", "lr-lambda-not-a-number"),
    # a client scheduler factory with a wrong keyword of its own: not a step function, a call to fix
    (_TB + f'  File "{_DS}", line 960, in _configure_lr_scheduler\n'
     "    self.lr_scheduler = self.client_lr_scheduler(self.basic_optimizer)\n"
     '  File "train.py", line 12, in <lambda>\n    lr_scheduler=lambda opt: LambdaLR(opt, warmup, steps=10),\n'
     "TypeError: LambdaLR.__init__() got an unexpected keyword argument 'steps'\n", "ds-lr-scheduler-step-function"),
    # the same unexpected keyword from the user's own scheduler, not the config's
    (_TB + '  File "train.py", line 20, in main\n    sched = WarmupCosineLR(opt, warmup_min_lr=0)\n'
     "TypeError: WarmupCosineLR.__init__() got an unexpected keyword argument 'warmup_min_lr'\n",
     "ds-scheduler-params"),
    # the optimizer's name given as a string: another mistake
    ("AssertionError: Client Optimizer is of unexpected type <class 'str'>\n", "ds-optimizer-given-parameters"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_the_preflight_takes_torch_schedulers_by_name():
    base = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1}
    dsconfig.validate({**base, "scheduler": {"type": "CosineAnnealingLR", "params": {"T_max": 100, "eta_min": 0}}}, 2)
    with pytest.raises(ConfigError) as err:
        dsconfig.validate({**base, "scheduler": {"type": "CosineAnnealingLR",
                                                 "params": {"warmup_num_steps": 20, "total_num_steps": 200}}}, 2)
    assert err.value.setting == "scheduler.params.warmup_num_steps" and "T_max" in err.value.hint
    with pytest.raises(ConfigError) as err:
        dsconfig.validate({**base, "scheduler": {"type": "StepLR", "params": {"step_size": 10, "gama": 0.5}}}, 2)
    assert "did you mean 'gamma'" in err.value.hint
    with pytest.raises(ConfigError) as err:  # torch.optim's Optimizer is no scheduler
        dsconfig.validate({**base, "scheduler": {"type": "Optimizer", "params": {}}}, 2)
    assert err.value.setting == "scheduler.type"

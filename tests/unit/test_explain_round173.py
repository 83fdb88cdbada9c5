"""Round 173's rules (issue 45), from live failures of optimizers, LR schedulers and GradScaler set up wrong in a
user's DDP or DeepSpeed script: torch's Optimizer.add_param_group refusing a parameter in two groups
(optim-param-in-two-groups), an LR scheduler built on something not an optimizer (scheduler-not-optimizer),
OneCycleLR stepped past its total steps (onecycle-past-total-steps), GradScaler finding no gradients
(gradscaler-no-grads); second wordings (other versions' and callers' words) and near misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("optim-param-in-two-groups", "scheduler-not-optimizer", "onecycle-past-total-steps", "gradscaler-no-grads")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "name"), [
    # torch 1.x's add_param_group under a plain (non-torchrun) script
    ('  File "/opt/conda/lib/python3.8/site-packages/torch/optim/optimizer.py", line 265, in add_param_group\n'
     '    raise ValueError("some parameters appear in more than one parameter group")\n'
     "ValueError: some parameters appear in more than one parameter group\n", "optim-param-in-two-groups"),
    # an older DeepSpeed's ZeRO optimizer (not a torch Optimizer subclass) given to a torch scheduler
    ('  File "/usr/lib/python3/dist-packages/torch/optim/lr_scheduler.py", line 28, in __init__\n'
     "    '{} is not an Optimizer'.format(type(optimizer).__name__))\n"
     "TypeError: FP16_DeepSpeedZeroOptimizer is not an Optimizer\n", "scheduler-not-optimizer"),
    # ReduceLROnPlateau's own check, a later rank's prefix
    ("[rank3]: TypeError: LambdaLR is not an Optimizer\n", "scheduler-not-optimizer"),
    # torch 1.x's OneCycleLR wording (format(), a single step)
    ('  File "/usr/local/lib/python3.7/dist-packages/torch/optim/lr_scheduler.py", line 1582, in get_lr\n'
     "    .format(step_num + 1, self.total_steps))\n"
     "ValueError: Tried to step 3002 times. The specified number of total steps is 3000\n",
     "onecycle-past-total-steps"),
    # torch.cuda.amp's GradScaler before 2.3, update() with no step recorded
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py", line 385, in update\n'
     '    assert len(found_infs) > 0, "No inf checks were recorded prior to update."\n'
     "AssertionError: No inf checks were recorded prior to update.\n", "gradscaler-update-without-step"),
    ('    assert len(optimizer_state["found_inf_per_device"]) > 0, "No inf checks were recorded for this '
     'optimizer."\nAssertionError: No inf checks were recorded for this optimizer.\n', "gradscaler-no-grads"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # DeepSpeed's own duplicate check of the client optimizer is its own family
    ("AssertionError: Parameter with name: layer.weight occurs multiple times in optimizer.param_groups. Make sure "
     "it only appears once to prevent undefined behavior.\n", "ds-param-in-two-groups"),
    # an empty parameter list is not a duplicate
    ("ValueError: optimizer got an empty parameter list\n", None),
    # a class that is not an optimizer in another sense (lower case, another library's words)
    ("TypeError: 'NoneType' object is not an optimizer\n", None),
    # a loop's own step counter wording, not OneCycleLR's
    ("ValueError: Tried to step past the end of the dataset\n", None),
    # GradScaler's other misuse: unscale_ twice, not a missing gradient
    ("RuntimeError: unscale_() has already been called on this optimizer since the last update().\n", None),
])
def test_near_misses(text, name):
    got = sig(text)
    assert got not in NEW
    if name:
        assert got == name

"""Round 188's rules (issue 45, live: gradient accumulation, no_sync and micro-batching in distributed training):
DeepSpeed's ZeRO optimizer stepped by the script itself between accumulation boundaries (the user's `optimizer.step()`
frame right above stage_1_and_2.py's step, then the averaged_gradients KeyError), engine.step() inside engine.no_sync(),
engine.coalesce_grad_reduction() without ZeRO, a method named uncalled in a with statement (`with model.no_sync:`), a
method hidden by a value assigned to its name (`engine.gradient_accumulation_steps = 4`), and Accelerator() given the
accumulation steps and a GradientAccumulationPlugin. Second wordings (other versions' and callers' words) and near
misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-zero-optimizer-step-direct", "ds-step-inside-no-sync", "ds-coalesce-needs-zero", "method-not-called-in-with",
       "method-overwritten-by-value", "accelerate-accumulation-steps-and-plugin")

_SITE = "/opt/conda/lib/python3.10/site-packages"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


def test_optimizer_stepped_directly_zero1_older_wording():
    # DeepSpeed 0.10's ZeRO-1/2 step (has_overflow's enumerate of averaged_gradients), Python 3.10 (no carets),
    # the optimizer reached through the engine's attribute
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 61, in <module>\n'
            "    model_engine.optimizer.step()\n"
            f'  File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 1763, in step\n'
            "    self.check_overflow()\n"
            f'  File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 2011, in check_overflow\n'
            "    self.overflow = self.has_overflow(partition_gradients)\n"
            f'  File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 1991, in has_overflow\n'
            "    overflow = self.has_overflow_partitioned_grads_serial()\n"
            f'  File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 1982, in '
            "has_overflow_partitioned_grads_serial\n"
            "    for j, grad in enumerate(self.averaged_gradients[i]):\n"
            "KeyError: 0\n")
    assert sig(text) == "ds-zero-optimizer-step-direct"


def test_engine_step_without_backward_stays_its_own():
    # engine.step() (the engine's own self.optimizer.step()) with no engine.backward before it: round 169's answer
    text = ("[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "train.py", line 15, in <module>\n'
            "[rank0]:     engine.step()\n"
            f'[rank0]:   File "{_SITE}/deepspeed/runtime/engine.py", line 3516, in _take_model_step\n'
            "[rank0]:     self.optimizer.step()\n"
            f'[rank0]:   File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 3039, in step\n'
            "[rank0]:     scaled_global_grad_norm = self.scaled_global_norm()\n"
            f'[rank0]:   File "{_SITE}/deepspeed/runtime/zero/stage_1_and_2.py", line 2951, in scaled_global_norm\n'
            "[rank0]:     norm = self.get_grad_norm_direct(self.averaged_gradients[i], self.params_in_partition[i])\n"
            "[rank0]: KeyError: 0\n")
    assert sig(text) == "ds-step-without-backward"


def test_optimizer_step_with_another_key_error_is_not_direct_step():
    # the user's optimizer.step() into a plain torch optimizer's state: not ZeRO's averaged gradients
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 40, in <module>\n'
            "    optimizer.step()\n"
            f'  File "{_SITE}/torch/optim/adamw.py", line 180, in step\n'
            "    state = self.state[p]\n"
            "KeyError: 0\n")
    assert sig(text) != "ds-zero-optimizer-step-direct"


def test_step_inside_coalesce_block():
    # coalesce_grad_reduction() sets the same flag: the same assertion
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 30, in <module>\n'
            "    engine.step()\n"
            f'  File "{_SITE}/deepspeed/runtime/engine.py", line 3576, in step\n'
            "    assert not self.inside_no_sync_ctxt, \\\n"
            "AssertionError: It is illegal to call Engine.step() inside no_sync context manager\n")
    assert sig(text) == "ds-step-inside-no-sync"


@pytest.mark.parametrize("text", [
    # no_sync entered twice: another mistake
    ("Traceback (most recent call last):\n"
     f'  File "{_SITE}/deepspeed/runtime/engine.py", line 3230, in no_sync\n'
     "    assert not self.inside_no_sync_ctxt, \"no_sync context manager reentry is unsupported\"\n"
     "AssertionError: no_sync context manager reentry is unsupported\n"),
    # coalesce under pipeline parallelism: not the missing ZeRO stage
    ("Traceback (most recent call last):\n"
     f'  File "{_SITE}/deepspeed/runtime/engine.py", line 3261, in coalesce_grad_reduction\n'
     '    raise NotImplementedError("coalesce_grad_reduction is not supported under pipeline parallelism")\n'
     "NotImplementedError: coalesce_grad_reduction is not supported under pipeline parallelism\n"),
])
def test_near_misses_of_no_sync_and_coalesce(text):
    assert sig(text) not in ("ds-step-inside-no-sync", "ds-coalesce-needs-zero")


def test_coalesce_on_stage_zero():
    text = ("[rank3]: NotImplementedError: coalesce_grad_reduction requires ZeRO stage 1/2/3, got stage 0\n")
    assert sig(text) == "ds-coalesce-needs-zero"


@pytest.mark.parametrize("text", [
    # torch.no_grad (a class) without the call, Python 3.12
    ("Traceback (most recent call last):\n  File \"eval.py\", line 12, in <module>\n    with torch.no_grad:\n"
     "TypeError: 'type' object does not support the context manager protocol\n"),
    # a plain function, rank-prefixed
    ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 8, in <module>\n"
     "[rank1]:     with accumulate_ctx:\n"
     "[rank1]: TypeError: 'function' object does not support the context manager protocol\n"),
    # async with on an uncalled method
    ("TypeError: 'method' object does not support the asynchronous context manager protocol\n"),
])
def test_uncalled_in_with(text):
    assert sig(text) == "method-not-called-in-with"


@pytest.mark.parametrize("text", [
    # a function that returned None used in a with statement: a bug of the function, and no version refusal either
    ("Traceback (most recent call last):\n  File \"train.py\", line 20, in <module>\n    with get_context():\n"
     "TypeError: 'NoneType' object does not support the context manager protocol\n"),
    # Python's item assignment refusal: not a version refusal
    ("Traceback (most recent call last):\n  File \"train.py\", line 20, in <module>\n    shape[0] = 4\n"
     "TypeError: 'tuple' object does not support item assignment\n"),
])
def test_other_objects_in_with_are_neither_uncalled_nor_unsupported(text):
    assert sig(text) not in ("method-not-called-in-with", "refused-unsupported")


def test_method_overwritten_older_python():
    # Python 3.10 (no carets), a float over a method of the library's object
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 50, in <module>\n'
            "    trainer.fit()\n"
            f'  File "{_SITE}/mylib/trainer.py", line 210, in fit\n'
            "    lr = base * self.lr_scale()\n"
            "TypeError: 'float' object is not callable\n")
    assert sig(text) == "method-overwritten-by-value"


@pytest.mark.parametrize("text", [
    # the script's own variable, no self.NAME() on the line
    ("Traceback (most recent call last):\n  File \"train.py\", line 30, in <module>\n    lr = scheduler(step)\n"
     "TypeError: 'float' object is not callable\n"),
    # a callback left None: another mistake
    ("Traceback (most recent call last):\n  File \"lib/loop.py\", line 30, in run\n    self.on_step(batch)\n"
     "TypeError: 'NoneType' object is not callable\n"),
    # another call before self.NAME() on the line could be the int
    ("Traceback (most recent call last):\n  File \"lib/loop.py\", line 30, in run\n"
     "    total = steps(batch) + self.count()\n"
     "TypeError: 'int' object is not callable\n"),
])
def test_near_misses_are_not_method_overwritten(text):
    assert sig(text) != "method-overwritten-by-value"


def test_accelerate_steps_and_plugin():
    text = ("[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/accelerate/accelerator.py\", line 372, in "
            "__init__\n[rank0]:     raise ValueError(\n"
            "[rank0]: ValueError: You can only pass one of `gradient_accumulation_steps` and "
            "`gradient_accumulation_plugin`. Please only pass in the created `GradientAccumulationPlugin` object.\n")
    assert sig(text) == "accelerate-accumulation-steps-and-plugin"

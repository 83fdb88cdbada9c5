"""Round 90's rule (issue 45), from Megatron-LM, Megatron-DeepSpeed, NeMo and GPT-NeoX runs launched across GPUs and
nodes: GPT-NeoX's check that the GPUs it counts divide into pipeline x model parallel groups
(NeoXArgs.calculate_derived: `(global_num_gpus / pp_size) / mp_size [(G / P) / M] must be a whole number`) is
world-size-indivisible, the family of Megatron core's and vLLM's world size against the model-parallel sizes. A second
wording (the 2021 releases' `num_gpus`, the colored `[ERROR]` prefix of later ones) and near misses: GPT-NeoX's other
checks with similar words, which must not be read as it."""

import pytest
from explain_rounds import sig

_TB = "Traceback (most recent call last):\n"
# megatron/neox_arguments/arguments.py: ERROR = f"{RED}[ERROR]{END} " with RED = "\033[91m", END = "\033[0m"
_NEOX_ERROR = "\x1b[91m[ERROR]\x1b[0m "


@pytest.mark.parametrize("text", [
    # the releases of April-September 2021 (efd39e56 .. c9961a48) name the count num_gpus, logged then raised from deepy.py
    ("ERROR:root:NeoXArgs.calculate_derived() (num_gpus / pp_size) / mp_size [(6 / 2) / 2] must be a whole number\n"
     + _TB + '  File "./deepy.py", line 26, in <module>\n    neox_args = NeoXArgs.consume_deepy_args()\n'
     "AssertionError: NeoXArgs.calculate_derived() (num_gpus / pp_size) / mp_size [(6 / 2) / 2] must be a whole "
     "number\n"),
    # later releases prefix the message with a colored [ERROR] (3ad61952 on), as logging.error prints it and as the
    # AssertionError carries it
    ("ERROR:root:" + _NEOX_ERROR + "NeoXArgs.calculate_derived() (global_num_gpus / pp_size) / mp_size [(12 / 4) / 2] "
     "must be a whole number\n"),
    ("AssertionError: " + _NEOX_ERROR + "NeoXArgs.calculate_derived() (global_num_gpus / pp_size) / mp_size "
     "[(16 / 3) / 2] must be a whole number\n"),
])
def test_second_wordings(text):
    assert sig(text) == "world-size-indivisible"


@pytest.mark.parametrize("text", [
    # GPT-NeoX's other checks with "must be a whole number" / "divisible" / "model_parallel_size" in them
    # (megatron/training.py; neox_arguments/arguments.py check_batch_parameters, validate_values, the GQA check)
    (_TB + '  File "/gpt-neox/megatron/training.py", line 1416, in train\n'
     "AssertionError: checkpoint_factor must be a whole number when using linear checkpoint_scale\n"),
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size \n32 != 4 * 1 * 4\n"),
    "ERROR:root:" + _NEOX_ERROR + "NeoXArgs.validate_values() hidden_size must be divisible by num_attention_heads\n",
    "AssertionError: Number of KV heads must be at least model_parallel_size for now!\n",
    # the message cut before its verdict, as a log tail can hold it: nothing says the sizes do not divide
    "ERROR:root:NeoXArgs.calculate_derived() (global_num_gpus / pp_size) / mp_size [(4 / 4) / 2\n",
])
def test_near_misses(text):
    assert sig(text) != "world-size-indivisible"

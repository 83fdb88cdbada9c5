"""Round 55's rules (issue 45), from DeepSpeed's own tracker of 2020-2023 (sigdeepspeed.py, sigsetup.py): one of
DeepSpeed's compiled ops looked for as a module the install never built, a config value DeepSpeed's runtime compares or
counts with that is still a string ("auto"), and a console script whose #! line names a python that no longer exists:
a second wording of each, in another op's, another DeepSpeed file's or another shell's words than the corpus case it was
written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("ds-op-not-built", "ds-config-auto", "script-bad-interpreter")


@pytest.mark.parametrize("text,expected", [
    # the transformer kernel's module as TransformerBuilder.absolute_name() names it (op_builder/transformer.py)
    ("  File \"/usr/local/lib/python3.8/dist-packages/deepspeed/ops/op_builder/builder.py\", line 211, in load\n"
     "    return importlib.import_module(self.absolute_name())\n"
     "ModuleNotFoundError: No module named 'deepspeed.ops.transformer.transformer_op'\n", "ds-op-not-built"),
    # async I/O's (op_builder/async_io.py: 'deepspeed.ops.aio.{NAME}_op'), under a rank prefix
    ("[rank0]: ModuleNotFoundError: No module named 'deepspeed.ops.aio.async_io_op'\n", "ds-op-not-built"),
    # config.py's _batch_assertion comparing a train_batch_size of "auto" with 0 (deepspeed.zero.Init given an HF
    # config whose "auto" nothing filled, Roblox/FAI-RL#70)
    ("  File \"/usr/local/lib/python3.11/site-packages/deepspeed/runtime/config.py\", line 879, in _batch_assertion\n"
     "    assert train_batch > 0, f\"Train batch size: {train_batch} has to be greater than 0\"\n"
     "           ^^^^^^^^^^^^^^^\n"
     "TypeError: '>' not supported between instances of 'str' and 'int'\n", "ds-config-auto"),
    # lr_schedules.py's WarmupDecayLR counting with a total_num_steps of "auto" (its get_lr)
    ("[rank1]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/lr_schedules.py\", line 770, in get_lr\n"
     "[rank1]:     float(self.total_num_steps - self.last_batch_iteration) /\n"
     "[rank1]: TypeError: unsupported operand type(s) for -: 'str' and 'int'\n", "ds-config-auto"),
    # zsh's words (exec.c: "%s: bad interpreter: %s: %e") for a torchrun whose python was moved
    ("zsh: /data/envs/train/bin/torchrun: bad interpreter: /home/alice/miniconda3/envs/train/bin/python3.10: no such "
     "file or directory\n", "script-bad-interpreter"),
    # bash's for accelerate's console script in a copied venv
    ("-bash: /opt/venvs/llm/bin/accelerate: /build/venvs/llm/bin/python3: bad interpreter: No such file or directory\n",
     "script-bad-interpreter"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed itself not installed for this python is not one of its ops
    ("ModuleNotFoundError: No module named 'deepspeed'\n", "ds-op-not-built"),
    # a pure-Python module of DeepSpeed that this release lacks
    ("ModuleNotFoundError: No module named 'deepspeed.ops.op_builder.npu'\n", "ds-op-not-built"),
    # a pre-built op that is there but does not load (deepspeedai/DeepSpeed#949)
    ("ImportError: dynamic module does not define module export function (PyInit_transformer_op)\n", "ds-op-not-built"),
    # a JIT build that left no .so (deepspeedai/DeepSpeed#5723)
    ("[rank1]: ImportError: /home/nlp/.cache/torch_extensions/py310_cu121/cpu_adam/cpu_adam.so: cannot open shared "
     "object file: No such file or directory\n", "ds-op-not-built"),
    # a string learning rate in torch's own optimizer (a YAML-parsed "1e-5"; funcwj/deep-clustering#3)
    ("  File \"/home/anaconda3/lib/python3.6/site-packages/torch/optim/rmsprop.py\", line 29, in __init__\n"
     "    if not 0.0 <= lr:\n"
     "TypeError: '<=' not supported between instances of 'float' and 'str'\n", "ds-config-auto"),
    # another TypeError in DeepSpeed's own file (a fused Adam built for another torch; deepspeedai/DeepSpeed#4024)
    ("  File \"/usr/local/lib/python3.9/site-packages/deepspeed/ops/adam/fused_adam.py\", line 191, in step\n"
     "    multi_tensor_applier(self.multi_tensor_adam,\n"
     "TypeError: multi_tensor_adam(): incompatible function arguments. The following argument types are supported:\n",
     "ds-config-auto"),
    # the same comparison in the script's own frame is the script's
    ("  File \"train.py\", line 40, in main\n    if args.clip > 0.0:\n"
     "TypeError: '>' not supported between instances of 'str' and 'float'\n", "ds-config-auto"),
    # a script saved with CRLF line ends: its interpreter's name ends in a carriage return
    ("bash: ./run_ds.sh: /bin/bash^M: bad interpreter: No such file or directory\n", "script-bad-interpreter"),
    ("zsh: ./train.sh: bad interpreter: /bin/bash^M: no such file or directory\n", "script-bad-interpreter"),
    # an interpreter that exists but may not be executed (a noexec mount)
    ("bash: ./deepspeed: /mnt/env/bin/python: bad interpreter: Permission denied\n", "script-bad-interpreter"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


@pytest.mark.parametrize("name", NEW)
def test_each_new_family_is_translated(name):
    for s in (s for s in explain.SIGNATURES if s.name == name):
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH
        assert s.retry is False

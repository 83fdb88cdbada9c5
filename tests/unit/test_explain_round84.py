"""Round 84's rules (issue 45), from Hugging Face multi-GPU training threads (sigsetup.py): transformers, TRL or PEFT
and an accelerate of another release, seen in Python's AttributeError on accelerate's FSDP plugin
(FullyShardedDataParallelPlugin) for a member the installed accelerate has not got yet (the caller is newer) or no
longer has (the caller is older): a second wording of each, in another caller's words or another member's than the
corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEWER = "transformers (or TRL) reads a member of accelerate's FSDP plugin"
OLDER = "transformers (or PEFT) calls a method of accelerate's FSDP plugin"


def _cause(text):
    found = explain.explain(text)
    return found.cause if found else None


@pytest.mark.parametrize("text,cause", [
    # the same attribute read by another caller, axolotl on transformers' Trainer (axolotl-ai-cloud/axolotl#542)
    ("'FullyShardedDataParallelPlugin' object has no attribute 'activation_checkpointing'\n", NEWER),
    # a member of accelerate 0.34 (utils/dataclasses.py) read by a newer caller, CPython's AttributeError words
    ("[rank0]: AttributeError: 'FullyShardedDataParallelPlugin' object has no attribute 'cpu_ram_efficient_loading'\n",
     NEWER),
    # accelerate 1.6's fsdp_version, read by a TRL or transformers made for FSDP2
    ("AttributeError: 'FullyShardedDataParallelPlugin' object has no attribute 'fsdp_version'\n", NEWER),
    # transformers 4.2x's Trainer.save_model on accelerate 0.21+ (azshue/AutoPoison#5), the other way round
    ("    self.accelerator.state.fsdp_plugin.save_model(self.accelerator, self.model, output_dir)\n"
     "AttributeError: 'FullyShardedDataParallelPlugin' object has no attribute 'save_model'\n", OLDER),
    # PEFT's fsdp_auto_wrap_policy calling the class's method that accelerate 0.30 moved out (huggingface/peft#1699)
    ("AttributeError: type object 'FullyShardedDataParallelPlugin' has no attribute 'get_module_class_from_name'\n",
     OLDER),
])
def test_second_wordings(text, cause):
    assert sig(text) == "import-name"
    assert _cause(text).startswith(cause)


@pytest.mark.parametrize("text", [
    # accelerate's state without an FSDP plugin at all: launched without an FSDP config (huggingface/accelerate#1893)
    "AttributeError: 'AcceleratorState' object has no attribute 'fsdp_plugin'\n",
    # torch's FSDP wrapper of the model (its __getattr__ falls through to the module), not accelerate's plugin
    "AttributeError: 'FullyShardedDataParallel' object has no attribute 'generate'\n",
    # fairscale's flat parameter (facebookresearch/fairscale#1193)
    "AttributeError: 'FlatParameter' object has no attribute '_full_param_padded'\n",
    # Lightning's sharded wrapper (Lightning-AI/pytorch-lightning#6804)
    "AttributeError: 'LightningShardedDataParallel' object has no attribute 'require_backward_grad_sync'\n",
    # min_num_params left the plugin in 0.11 and came back in 0.34: no direction can be told from it
    "AttributeError: 'FullyShardedDataParallelPlugin' object has no attribute 'min_num_params'\n",
])
def test_near_misses(text):
    assert not (_cause(text) or "").startswith((NEWER, OLDER))


def test_the_new_texts_are_translated():
    for s in explain.SIGNATURES:
        if s.cause.startswith((NEWER, OLDER)):
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

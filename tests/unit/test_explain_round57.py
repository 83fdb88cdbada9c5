"""Round 57's rules (issue 45), from Hugging Face multi-GPU training threads (sighf.py, sigtorch.py, sigwords.py):
accelerate 0.5-0.6 reading a DeepSpeed config section its own generated config lacks, FSDP asked for a state-dict type
of None (the HF Trainer resuming before accelerate wrapped the model), an optimizer's state and gradient in two dtypes
(torch's lerp check; transformers 4.46 under FSDP), and the Trainer's "Can't find a valid checkpoint"
whose cause and fix now name FSDP's sharded checkpoint that an older transformers did not read: a second wording of
each, in another version's or another caller's words than the corpus case it was written from, and near misses that
must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("accelerate-ds-fp16-key", "fsdp-state-dict-type-unset", "optimizer-state-dtype")


@pytest.mark.parametrize("text,expected", [
    # accelerate 0.6.x's next line (accelerator.py line 242): a config with an fp16 section but no bf16 one
    ("  File \"/usr/local/lib/python3.8/site-packages/accelerate/accelerator.py\", line 242, in mixed_precision\n"
     "    elif self.state.deepspeed_plugin.deepspeed_config[\"bf16\"][\"enabled\"]:\n"
     "KeyError: 'bf16'\n", "accelerate-ds-fp16-key"),
    # torch 1.13-2.0's FullyShardedDataParallel.state_dict_type (the config built in the same line)
    ("  File \"/opt/conda/lib/python3.9/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line "
     "2197, in state_dict_type\n    state_dict_config = _state_dict_type_to_config[state_dict_type]()\n"
     "KeyError: None\n", "fsdp-state-dict-type-unset"),
    # torch 2.x under torchrun with Python 3.11's carets and the ranks' prefixes
    ("[rank1]:   File \"/opt/venv/lib/python3.11/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py\", "
     "line 621, in set_state_dict_type\n"
     "[rank1]:     state_dict_config_type = _state_dict_type_to_config[state_dict_type]\n"
     "[rank1]:                              ~~~~~~~~~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^\n"
     "[rank1]: KeyError: None\n", "fsdp-state-dict-type-unset"),
    # Adam's step in fp16 (torch/optim/adam.py, the same lerp_), the ranks' prefix
    ("[rank0]:     exp_avg.lerp_(grad, 1 - beta1)\n"
     "[rank0]: RuntimeError: expected dtype float for `end` but got dtype c10::Half\n", "optimizer-state-dtype"),
    # the same words with the backticks eaten by markdown (zichongli5/NorMuon#7, a custom optimizer's lerp_)
    ("`RuntimeError: expected dtype float for end but got dtype c10::BFloat16. `\n", "optimizer-state-dtype"),
    # transformers' loader refusing a checkpoint directory (trainer.py _load_from_checkpoint) keeps its answer
    ("    raise ValueError(f\"Can't find a valid checkpoint at {resume_from_checkpoint}\")\n"
     "ValueError: Can't find a valid checkpoint at ./output/checkpoint-1000\n", "ckpt-missing-optimizer-states"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a training script's own read of the same key (diffusers' examples before their `"fp16" in ...` guard)
    ("  File \"train_text_to_image.py\", line 612, in main\n"
     "    if accelerator.state.deepspeed_plugin.deepspeed_config[\"fp16\"][\"enabled\"]:\n"
     "KeyError: 'fp16'\n", "accelerate-ds-fp16-key"),
    # the bare KeyError, no frame of accelerate's property
    ("KeyError: 'fp16'\n", "accelerate-ds-fp16-key"),
    # FSDP2's set_state_dict_type given LOCAL_STATE_DICT, a type it has no config for: a value, not None
    ("    state_dict_config_type = _state_dict_type_to_config[state_dict_type]\n"
     "KeyError: <StateDictType.LOCAL_STATE_DICT: 2>\n", "fsdp-state-dict-type-unset"),
    # another lookup that fails with None (torch/nn/modules/module.py's __getitem__ of a ModuleDict)
    ("    return self._modules[key]\nKeyError: None\n", "fsdp-state-dict-type-unset"),
    # lerp's other check, its `weight` argument (aten Lerp.cpp), is not the optimizer's state against the gradient
    ("RuntimeError: expected dtype float for `weight` but got dtype double\n", "optimizer-state-dtype"),
    # a matmul of two precisions keeps its own answer (torch's addmm check)
    ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16\n",
     "optimizer-state-dtype"),
    # transformers refusing an FSDP checkpoint when FSDP is off is another check than the missing checkpoint
    ("ValueError: Checkpoint found at out/checkpoint-500 is only supported when using PyTorch FSDP\n",
     "ckpt-missing-optimizer-states"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_checkpoint_answer_names_the_fsdp_layout():
    found = explain.explain("ValueError: Can't find a valid checkpoint at /workspace/models/fsdp/checkpoint-5\n")
    assert found is not None and found.signature == "ckpt-missing-optimizer-states"
    ckpt = next(s for s in explain.SIGNATURES if s.name == "ckpt-missing-optimizer-states")
    assert "pytorch_model_fsdp_0" in ckpt.cause and "pytorch_model_fsdp_0" in ckpt.fix


def test_the_new_texts_are_translated():
    for s in explain.SIGNATURES:
        if s.name in NEW or s.name == "ckpt-missing-optimizer-states":
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

"""Round 49's rules (issue 45), from Hugging Face multi-GPU training threads (sigrlhf.py, sighf.py, sigtraining.py,
sigsetup.py): TRL's GRPO/RLOO batch that cannot hold whole groups of num_generations completions, transformers'
TrainingArguments refusing an fsdp word, accelerate refusing its config file's unknown keys, accelerate's FSDP2 given
the optimizer without its model, DDP given a model with DTensor parameters, FSDP given bitsandbytes' integer weights,
and transformers reading an Accelerator property the installed accelerate lacks: a second wording of each, in another
version's or another caller's words than the corpus case it was written from, and near misses that must not be read as
it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("grpo-generations-batch", "hf-fsdp-option", "fsdp2-prepare-optimizer", "dtensor-ddp", "fsdp-integer-params")


@pytest.mark.parametrize("text,expected", [
    # TRL 0.16-0.19's wording (grpo_config.py __post_init__), with steps_per_generation (the case was 0.14's)
    ("[rank0]: ValueError: The effective train batch size (4 x 1 x 4) must be evenly divisible by the number of "
     "generations per prompt (6). Given the current effective train batch size, the valid values for the number of "
     "generations are: [2, 4, 8, 16].\n", "grpo-generations-batch"),
    # ms-swift's GRPO on TRL, one card and num_generations=1 (modelscope/ms-swift#3980)
    ("The global train batch size (1 x 1) must be evenly divisible by the number of generations per prompt (1). Given "
     "the current train batch size, the valid values for the number of generations are: [].\n", "grpo-generations-batch"),
    # TRL 0.20+'s evaluation check and RLOO's (rloo_config.py)
    ("ValueError: The global eval batch size (2 * 4) must be divisible by the number of generations used for "
     "evaluation (16).\n", "grpo-generations-batch"),
    ("ValueError: GRPO requires at least 2 generations per prompt to calculate the advantages. You provided 1, which "
     "is less than the minimum required.\n", "grpo-generations-batch"),
    # transformers' own check of the fsdp list (training_args.py), no FSDPOption word refused
    ("ValueError: `--fsdp offload` can't work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp "
     "shard_grad_op`. For example, `--fsdp \"full_shard offload\"`.\n", "hf-fsdp-option"),
    # a plain Enum's wording (before ExplicitEnum's _missing_ listed the choices)
    ("ValueError: 'full-shard' is not a valid FSDPOption\n", "hf-fsdp-option"),
    # another project's stale accelerate config (gemlab-vt/NoiseCLR#2)
    ("ValueError: The config file at accelerate_config.yaml had unknown keys (['command_file', 'commands', "
     "'deepspeed_config', 'downcast_bf16', 'fsdp_config', 'machine_rank']), please try upgrading your `accelerate` "
     "version or fix (and potentially remove) these keys from your config file.\n", "accelerate-config"),
    # accelerate 1.6.0's first wording (huggingface/accelerate#3394), its two literals joined without a space
    ("ValueError: With FSDP2, you need to pass model and optimizer to a single `Accelerator.prepare()` call.This is "
     "due to the fact that we apply a fix to the optimizer, which replaces its parameters after applying FSDP2.\n",
     "fsdp2-prepare-optimizer"),
    # accelerate's own refusal since huggingface/accelerate#3629
    ("[rank0]: ValueError: Your model contains `DTensor` parameters, which is incompatible with DDP. Maybe you loaded "
     "your model with `device_map='auto'`?\n", "dtensor-ddp"),
    # DDP's broadcast under SFTTrainer with DeepSpeed's launcher (pytorch/pytorch#150401), the assert's line above
    ("[rank0]:     assert mesh is not None, f\"found no DeviceMesh from dtensor args for {op_call}!\"\n"
     "[rank0]: AssertionError: found no DeviceMesh from dtensor args for c10d.broadcast_.default!\n", "dtensor-ddp"),
    # torch 1.13's flat_param.py (tatsu-lab/alpaca_farm#63)
    ("  File \"/usr/local/Miniconda3/envs/pytorch310/lib/python3.10/site-packages/torch/distributed/fsdp/flat_param.py"
     "\", line 435, in _init_flat_param\n    raise ValueError(\"Integer parameters are unsupported\")\n"
     "ValueError: Integer parameters are unsupported\n", "fsdp-integer-params"),
    # 8-bit DoRA under FSDP (axolotl-ai-cloud/axolotl#1589), the traceback's own frame
    ("  File \"/root/axo_clone/venv/lib/python3.10/site-packages/torch/distributed/fsdp/_flat_param.py\", line 759, in "
     "_validate_tensors_to_flatten\n    raise ValueError(\"Cannot flatten integer dtype tensors\")\n"
     "ValueError: Cannot flatten integer dtype tensors\n", "fsdp-integer-params"),
    # the other property transformers reads on a newer accelerate (accelerator.py's is_fsdp2, 1.6)
    ("[rank0]: AttributeError: 'Accelerator' object has no attribute 'is_fsdp2'\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed's own batch arithmetic, not TRL's groups
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 16 != 2 * 1 * 6\n", "grpo-generations-batch"),
    # veRL's trainer (ray_trainer.py) checking its own batch
    ("AssertionError: real_train_batch_size (1024) must be divisible by minimal possible batch size (48)\n",
     "grpo-generations-batch"),
    # another ExplicitEnum of TrainingArguments refusing a value is not the fsdp argument
    ("ValueError: step is not a valid IntervalStrategy, please select one of ['no', 'steps', 'epoch']\n",
     "hf-fsdp-option"),
    # transformers' refusal of the old sharded_ddp option (4.2x)
    ("ValueError: `--sharded_ddp offload` can't work on its own. It needs to be added to `--sharded_ddp zero_dp_2` or "
     "`--sharded_ddp zero_dp_3`. For example, `--sharded_ddp \"zero_dp_2 offload\"`.\n", "hf-fsdp-option"),
    # accelerate's FSDP plugin refusing a wrap policy is not the TrainingArguments' fsdp list
    ("ValueError: Invalid auto wrap policy: TRANSFORMER_WRAP. Must be one of ['TRANSFORMER_BASED_WRAP', "
     "'SIZE_BASED_WRAP', 'NO_WRAP']\n", "hf-fsdp-option"),
    # a checkpoint's unexpected keys are not accelerate's config file
    ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n\tUnexpected key(s) in state_dict: "
     "\"lm_head.bias\".\n", "accelerate-config"),
    # accelerate's other FSDP2 refusal: several models, not the optimizer apart
    ("ValueError: Only one model is supported when using FSDP2\n", "fsdp2-prepare-optimizer"),
    # Lightning's FSDP: an optimizer made before the model was set up (Lightning-Universe/lightning-GPT#17)
    ("ValueError: The optimizer does not seem to reference any FSDP parameters. HINT: Make sure to create the "
     "optimizer after setting up the model by referencing `self.trainer.model.parameters()` in the "
     "`configure_optimizers()` hook.\n", "fsdp2-prepare-optimizer"),
    # DTensor mixed with plain tensors in an op is another fault than DDP's broadcast
    ("RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
     "before calling distributed operators!\n", "dtensor-ddp"),
    ("AssertionError: found no DeviceMesh from dtensor args for aten.add.Tensor!\n", "dtensor-ddp"),
    # accelerate's refusal of a device_map='auto' model in distributed mode keeps its own answer
    ("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. "
     "Please rerun your script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.\n",
     "dtensor-ddp"),
    # FSDP given int8 beside fp16 (bitsandbytes-foundation/bitsandbytes#1709): FSDP's mixed-dtype check
    ("ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.int8\n",
     "fsdp-integer-params"),
    # bitsandbytes' quantizer given its own packed weights (huggingface/accelerate#2549)
    ("ValueError: Blockwise quantization only supports 16/32-bit floats, but got torch.uint8\n",
     "fsdp-integer-params"),
    # torch refusing requires_grad on an integer tensor (hiyouga/LlamaFactory#3497)
    ("RuntimeError: Only Tensors of floating point and complex dtype can require gradients\n",
     "fsdp-integer-params"),
    # accelerate's state used before an Accelerator exists, not a version apart
    ("AttributeError: 'AcceleratorState' object has no attribute 'distributed_type'\n", "import-name"),
    # a script's own attribute on the Accelerator
    ("AttributeError: 'Accelerator' object has no attribute 'my_scheduler'\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in explain.SIGNATURES:
        if s.name in NEW or s.cause.startswith(("accelerate refused its config file",
                                                "transformers (or TRL) reads a property")):
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

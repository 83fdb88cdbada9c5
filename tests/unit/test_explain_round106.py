"""Round 106's rules (issue 45), from threads on autograd and graph errors under multi-GPU wrappers (DDP, FSDP,
DeepSpeed): non-reentrant activation checkpointing whose recomputation differs from the forward
(torch/utils/checkpoint.py), and the narrower case of it where the recomputed tensors are empty because a parameter was
still sharded (DeepSpeed ZeRO-3 with frozen parameters before 0.19.3); DeepSpeed's no_sync() refusal under ZeRO-2/3
quoted wrapped over two lines, read as the refused ZeRO combination it is (ds-incompatible, whose fix now names the
Accelerate release that stopped calling it); and DDP's "marked ready twice" fix naming find_unused_parameters=True with
reentrant checkpointing. A second wording of each, in another version's or caller's words than the corpus case it was
written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("checkpoint-recompute-mismatch", "checkpoint-recompute-sharded-param")


@pytest.mark.parametrize("text,expected", [
    # deepspeed/runtime/engine.py DeepSpeedEngine.no_sync's f-string for ZeRO-3, under a rank prefix, and quoted
    # wrapped at another word than the corpus case
    ("[rank5]: AssertionError: no_sync context manager is incompatible with gradient partitioning logic of ZeRO "
     "stage 3\n", "ds-incompatible"),
    ("AssertionError: no_sync context manager is incompatible with gradient partitioning\nlogic of ZeRO stage 3\n",
     "ds-incompatible"),
    # pytorch/torchtitan#1117 (torch 2.6, XPU, llama4): a recomputed tensor one row shorter, not an empty one
    ("[rank11]:     raise CheckpointError(\n"
     "[rank11]: torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following "
     "tensors have different metadata than during the forward pass.\n"
     "[rank11]: tensor at position 46:\n"
     "[rank11]: saved metadata: {'shape': torch.Size([965, 5120]), 'dtype': torch.bfloat16, 'device': "
     "device(type='xpu', index=3)}\n"
     "[rank11]: recomputed metadata: {'shape': torch.Size([964, 5120]),", "checkpoint-recompute-mismatch"),
    # huggingface/trl#4314 (LoRA + FSDP2 context parallel): the sequence dimension halved in the recomputation
    ("[rank2]: torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following "
     "tensors have different metadata than during the forward pass.\n"
     "[rank2]: tensor at position 25:\n"
     "[rank2]: saved metadata: {'shape': torch.Size([1, 8, 24920, 128]), 'dtype': torch.bfloat16, 'device': "
     "device(type='cuda', index=2)}\n"
     "[rank2]: recomputed metadata: {'shape': torch.Size([1, 8, 12460, 128]), 'dtype': torch.bfloat16, 'device': "
     "device(type='cuda', index=2)}\n", "checkpoint-recompute-mismatch"),
    # torch/utils/checkpoint.py's third check of the recomputation (_recomputation_hook's pack)
    ("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: trying to save more tensors during "
     "recomputation than during the original forward pass.\n", "checkpoint-recompute-mismatch"),
    # the same metadata message without a rank prefix (a single-node torchrun log), fp16, an empty recomputed tensor
    ("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors "
     "have different metadata than during the forward pass.\n"
     "tensor at position 4:\n"
     "saved metadata: {'shape': torch.Size([2048]), 'dtype': torch.float16, 'device': device(type='cuda', index=0)}\n"
     "recomputed metadata: {'shape': torch.Size([0]), 'dtype': torch.float16, 'device': device(type='cuda', "
     "index=0)}\n", "checkpoint-recompute-sharded-param"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the same context manager's other assertions (engine.py): a loop's own nesting or step() inside it, not ZeRO
    ("AssertionError: no_sync context manager reentry is unsupported\n", "ds-incompatible"),
    ("AssertionError: It is illegal to call Engine.step() inside no_sync context manager\n", "ds-incompatible"),
    ("AssertionError: coalesce_grad_reduction cannot be nested inside another no_sync context\n", "ds-incompatible"),
    # modelscope/ms-swift#2590: torch.utils.checkpoint's warning about use_reentrant, printed before other errors
    ("/root/miniconda3/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py:632: UserWarning: "
     "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an "
     "exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the "
     "current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences "
     "between the two variants.\n  return fn(*args, **kwargs)\n", "checkpoint-recompute-mismatch"),
    # torch/utils/checkpoint.py's unpack of a saved tensor twice (ctx.saved_tensors read twice), not a recomputation
    ("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
     "already unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise "
     "please open an issue with details on your use case.\n", "checkpoint-recompute-mismatch"),
    # the forward's own tensor was the empty one (torch's metadata format, saved and recomputed the other way round)
    ("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors "
     "have different metadata than during the forward pass.\n"
     "tensor at position 4:\n"
     "saved metadata: {'shape': torch.Size([0]), 'dtype': torch.float16, 'device': device(type='cuda', index=0)}\n"
     "recomputed metadata: {'shape': torch.Size([2048]), 'dtype': torch.float16, 'device': device(type='cuda', "
     "index=0)}\n", "checkpoint-recompute-sharded-param"),
    # torch's load_state_dict given a ZeRO-3 model's partitioned (empty) weights: a checkpoint's, not a recomputation
    ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
     "\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([0]) from checkpoint, the "
     "shape in current model is torch.Size([32000, 4096]).\n", "checkpoint-recompute-sharded-param"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_checkpoint_wordings_keep_their_other_readings():
    assert sig("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following "
               "tensors have different metadata than during the forward pass.\ntensor at position 4:\n"
               "saved metadata: {'shape': torch.Size([0]), 'dtype': torch.float16, 'device': device(type='cuda', "
               "index=0)}\nrecomputed metadata: {'shape': torch.Size([2048]), 'dtype': torch.float16, 'device': "
               "device(type='cuda', index=0)}\n") == "checkpoint-recompute-mismatch"


def test_the_no_sync_refusal_names_the_accelerate_release():
    # yifan123/flow_grpo#72: the maintainer's fix was the versions (Accelerate 1.9 leaves no_sync() out under ZeRO-2/3)
    by_name = {s.name: s for s in translated_and_final(("ds-incompatible",)).values()}
    assert "Accelerate 1.9" in by_name["ds-incompatible"].fix


def test_marked_ready_twice_names_find_unused_parameters():
    # huggingface/transformers#4659 and huggingface/accelerate#2017: reentrant checkpointing failed under DDP only with
    # find_unused_parameters=True; the fix says so.
    by_name = {s.name: s for s in translated_and_final(("ddp-reentrant-checkpoint",)).values()}
    assert "find_unused_parameters=True" in by_name["ddp-reentrant-checkpoint"].fix


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

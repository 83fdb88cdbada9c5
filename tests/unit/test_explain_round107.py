"""Round 107's rules (issue 45), from DeepSpeed configuration threads (batch arithmetic, "auto" values, optimizer and
scheduler sources, offload, fp16/bf16): a fused GPU optimizer's multi_tensor_apply handed tensors that are not on the
GPU ('expected input to be on cuda': offloaded optimizer state meeting a GPU optimizer, as ZeRO-3's partial offload does
with device nvme), read as ds-fused-optimizer-cpu-tensor; and accelerate's refusal of two mixed precisions naming the HF
Trainer's bf16/fp16 training arguments among the launch's. A second wording of each, in another version's or caller's
words than the corpus case, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-fused-optimizer-cpu-tensor",)


@pytest.mark.parametrize("text,expected", [
    # NVIDIA/apex's FusedAdam (apex/optimizers/fused_adam.py -> multi_tensor_apply, csrc/multi_tensor_apply.cuh's
    # TORCH_CHECK(ref_device.type() == at::kCUDA, "expected input to be on cuda")), as Megatron-DeepSpeed steps it with
    # offload_optimizer on and no --cpu-optimizer: the whole shape of the traceback, composed from those files
    ("Traceback (most recent call last):\n"
     "  File \"/opt/apex/apex/optimizers/fused_adam.py\", line 170, in step\n"
     "    multi_tensor_applier(self.multi_tensor_adam,\n"
     "  File \"/opt/apex/apex/multi_tensor_apply/multi_tensor_apply.py\", line 27, in __call__\n"
     "    return op(self.chunk_size,\n"
     "RuntimeError: expected input to be on cuda\n", "ds-fused-optimizer-cpu-tensor"),
    # DeepSpeed's FusedLion (csrc/lion/multi_tensor_apply.cuh, the same check) under torch 2.x's rank prefix
    ("[rank1]:   File \"/usr/lib/python3/dist-packages/deepspeed/ops/lion/multi_tensor_apply.py\", line 17, in __call__\n"
     "[rank1]:     return op(self.chunk_size, noop_flag_buffer, tensor_lists, *args)\n"
     "[rank1]: RuntimeError: expected input to be on cuda\n", "ds-fused-optimizer-cpu-tensor"),
    # accelerate's DeepSpeedPlugin.set_mixed_precision the other way round (launch fp16, the config's bf16)
    ("[rank0]: ValueError: `--mixed_precision` arg cannot be set to `fp16` when `bf16` is set in the DeepSpeed config "
     "file.\n", "accelerate-ds-mixed-precision"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NVIDIA/TransformerEngine's cumsum (pytorch/csrc/extensions/misc.cpp): NVTE_CHECK(contiguous_input.is_cuda(),
    # "Expected input to be on CUDA.") is an input tensor of that op, not an optimizer
    ("RuntimeError: /workspace/TransformerEngine/transformer_engine/pytorch/csrc/extensions/misc.cpp:36 in function "
     "cumsum: Expected input to be on CUDA.\n", "ds-fused-optimizer-cpu-tensor"),
    # torch's device check between two tensors of one op
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "ds-fused-optimizer-cpu-tensor"),
    # DeepSpeed's engine refusing a client FusedAdam under ZeRO-Offload before any step (its own check)
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer "
     "(<class 'apex.optimizers.fused_adam.FusedAdam'>) which in most cases will yield poor performance. Please either "
     "use deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config\n", "ds-fused-optimizer-cpu-tensor"),
    # torch.distributed's NCCL collective given a CPU tensor
    ("RuntimeError: Tensors must be CUDA and dense\n", "ds-fused-optimizer-cpu-tensor"),
    # torch's random generator on the wrong device (a sampler's generator)
    ("RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'\n", "ds-fused-optimizer-cpu-tensor"),
    # a convolution's input and weight on different devices
    ("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or "
     "input should be a MKLDNN tensor and weight is a dense tensor\n", "ds-fused-optimizer-cpu-tensor"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_mixed_precision_names_the_training_arguments():
    by_name = translated_and_final(("accelerate-ds-mixed-precision",))
    s = by_name["accelerate-ds-mixed-precision"]
    assert "training arguments" in s.cause and "--bf16" in s.fix


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

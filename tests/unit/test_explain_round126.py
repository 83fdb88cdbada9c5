"""Round 126's rules (issue 45), from threads of sequence / context parallelism and long-context training across GPUs:
flash-attn's varlen kernel refusing the cumulative sequence lengths a packing trainer built (transformers' preparation
from position_ids), DTensor's dispatcher given plain tensors beside DTensors (torch's context parallel on the math SDPA
backend, a tensor left out of a TP/FSDP2 plan), and Python's `cannot import name` wrapped before the module's name
(mcore-bridge's context-parallel gated delta net on a Megatron-Core without its helpers): a second wording of each, in
another version's or caller's words than the corpus case it was written from, and near misses that must not be read
as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("flash-varlen-cu-seqlens", "dtensor-mixed-tensor")


@pytest.mark.parametrize("text,expected", [
    # flash-attn's other CHECK_SHAPE of the same function (mha_varlen_fwd checks cu_seqlens_q first), reached through
    # torch's own flash kernel (aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp, the same macro)
    ("  File \"/usr/lib/python3.10/site-packages/torch/_ops.py\", line 1116, in __call__\n"
     "    return self._op(*args, **(kwargs or {}))\n"
     "RuntimeError: cu_seqlens_q must have shape (batch_size + 1)\n", "flash-varlen-cu-seqlens"),
    # the backward's check (mha_varlen_bwd), under a torchrun rank prefix
    ("[rank5]:     dq, dk, dv, softmax_d, = flash_attn_gpu.varlen_bwd(\n"
     "[rank5]: RuntimeError: cu_seqlens_k must have shape (batch_size + 1)\n", "flash-varlen-cu-seqlens"),
    # NVIDIA-NeMo/RL#1051 (its title): the same dispatcher refusing flash-attn's custom op under a DTensor policy
    ("RuntimeError: flash_attn._flash_attn_varlen_forward.default: got mixed torch.Tensor and DTensor, need to convert "
     "all torch.Tensor to DTensor before calling distributed operators!\n", "dtensor-mixed-tensor"),
    # torch 2.1-2.4's torch/distributed/_tensor/dispatch.py, a matmul with an unsharded weight beside a sharded input
    ("[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/_tensor/dispatch.py\", line 362, in "
     "try_get_replicate_spec\n"
     "[rank0]:     raise RuntimeError(\n"
     "[rank0]: RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
     "DTensor before calling distributed operators!\n", "dtensor-mixed-tensor"),
    # Python's message for an installed package's module whose file it cannot name, wrapped before the module
    ("ImportError: cannot import name 'is_torch_fx_available' from\n"
     "'transformers.utils.import_utils' (unknown location)\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # flash-attn's dtype and layout checks of the same tensors (flash_api.cpp's TORCH_CHECK and CHECK_CONTIGUOUS): the
    # lengths' type or memory, not their number
    ("RuntimeError: cu_seqlens_q must have dtype int32\n", "flash-varlen-cu-seqlens"),
    ("RuntimeError: cu_seqlens_k must be contiguous\n", "flash-varlen-cu-seqlens"),
    # flash-attn's shape check of the query (mha_fwd's CHECK_SHAPE), not the packing's lengths
    ("RuntimeError: q must have shape (batch_size, seqlen_q, num_heads, head_size_og)\n", "flash-varlen-cu-seqlens"),
    # DTensor's UserWarning beside a numel-1 tensor (torch/distributed/tensor/_dispatch.py; pyg-team/pytorch_geometric
    # PR 10317's log), which it converts itself
    ("/usr/local/lib/python3.12/dist-packages/torch/distributed/tensor/_dispatch.py:439: UserWarning: Found a non-scalar "
     "tensor with numel=1 and ndim!=0, we are implicitly creating a replicated DTensor for it. However, please consider "
     "changing it to a scalar tensor or explicitly create a DTensor under distributed enviroment.\n",
     "dtensor-mixed-tensor"),
    # DTensor's sharding propagation without a rule for an operator (torch/distributed/tensor/_sharding_prop.py)
    ("NotImplementedError: Operator aten._scaled_dot_product_efficient_attention.default does not have a sharding "
     "strategy registered.\n", "dtensor-mixed-tensor"),
    # tensors on two devices (torch's own check), no DTensor
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "dtensor-mixed-tensor"),
    # a circular import wrapped the same way: Python's `from partially initialized module`, never another version
    ("ImportError: cannot import name 'nn' from\npartially initialized module 'torch' (most likely due to a circular "
     "import) (/home/me/torch/__init__.py)\n", "import-name"),
    # the script's own module, wrapped: its path is not under site-packages
    ("ImportError: cannot import name 'build_loader' from\n'data' (/home/me/project/data/__init__.py)\n",
     "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 147's rule (issue 45), from huggingface/accelerate's and huggingface/transformers' threads of 2025-2026 on
training with several GPUs: a scalar (0-dim) tensor among the forward's arguments of a model wrapped in DataParallel,
whose scatter chunks every tensor along dim 0 (the Trainer's num_items_in_batch, transformers#36492): a second wording
from another caller than the corpus case, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dataparallel-scalar-scatter",)


@pytest.mark.parametrize("text,expected", [
    # huggingface/trl#2338 (TRL's SFTTrainer on several GPUs, a notebook's traceback): the scatter's frames
    ("File /usr/local/lib/python3.11/dist-packages/torch/nn/parallel/comm.py:188, in scatter(tensor, devices, "
     "chunk_sizes, dim, streams, out)\n"
     "--> 188     return tuple(torch._C._scatter(tensor, devices, chunk_sizes, dim, streams))\n"
     "\n"
     "RuntimeError: chunk expects at least a 1-dimensional tensor\n", "dataparallel-scalar-scatter"),
    # torch 1.7's DistributedDataParallel with device_ids, which scattered its inputs the same way
    # (WZMIAOMIAO/deep-learning-for-image-processing#701's shape, torch.distributed.launch)
    ("  File \"/envs/ZTorch/lib/python3.8/site-packages/torch/nn/parallel/distributed.py\", line 612, in forward\n"
     "    inputs, kwargs = self.scatter(inputs, kwargs, self.device_ids)\n"
     "  File \"/envs/ZTorch/lib/python3.8/site-packages/torch/nn/parallel/scatter_gather.py\", line 36, in "
     "scatter_kwargs\n"
     "    inputs = scatter(inputs, target_gpus, dim) if inputs else []\n"
     "RuntimeError: chunk expects at least a 1-dimensional tensor\n", "dataparallel-scalar-scatter"),
    # a ChildFailedError-free rank line with torch's [rankN]: prefix
    ("[rank0]: RuntimeError: chunk expects at least a 1-dimensional tensor\n", "dataparallel-scalar-scatter"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the model's own chunk of a scalar (a loss split in two), no scatter in the text
    ("  File \"/work/model.py\", line 88, in forward\n"
     "    a, b = loss.chunk(2)\n"
     "RuntimeError: chunk expects at least a 1-dimensional tensor\n", "dataparallel-scalar-scatter"),
    # ATen's split of a 0-dim tensor (TensorShape.cpp split): another op's check
    ("RuntimeError: split expects at least a 1-dimensional tensor\n", "dataparallel-scalar-scatter"),
    # ATen's chunk given chunks=0 (TensorShape.cpp): another check of the same op
    ("RuntimeError: chunk expects `chunks` to be greater than 0, got: 0\n", "dataparallel-scalar-scatter"),
    # tensor_split of a 0-dim tensor (TensorShape.cpp tensor_split)
    ("RuntimeError: tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims\n",
     "dataparallel-scalar-scatter"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

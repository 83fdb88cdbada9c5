"""Round 148's rule (issue 45), from pytorch/pytorch's 2025-2026 threads of the distributed oncall: a parameter read
while FSDP had freed its unsharded storage (ATen's setStorage check, `... are out of bounds for storage of size 0`)
where FSDP is named in the failure, as fsdp2-unsharded-param-freed (sigfsdp.py): a second wording of it, in another
caller's words than the corpus case it was written from, and near misses that must not be read as it (the same check
with a storage that is not empty, or with no FSDP anywhere in the log)."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("fsdp2-unsharded-param-freed",)


@pytest.mark.parametrize("text", [
    # ByteDance-Seed/VeOmni#804 (FSDP2, chunk_logprobs' backward reading the LM head's weight): the message wrapped
    # as posted, FSDP2 named by its poster
    "Run any VeOmni FSDP2 training that enables `use_fused_kernels=True` on the actor and triggers a backward call.\n"
    "RuntimeError: setStorage: sizes [1024, 151936], strides [1, 1024], storage offset 0,\n"
    "and itemsize 2 requiring a storage size of 311164928 are out of bounds for storage of size 0\n",
    # FSDP2's warning since pytorch/pytorch#181850 (_fsdp_state.py, as printed in huggingface/pytorch-image-models#2766),
    # then the backward that fails for it
    "/usr/local/lib/python3.12/dist-packages/torch/distributed/fsdp/_fully_shard/_fsdp_state.py:336: UserWarning: "
    "FSDP2-wrapped module (FSDPPatchEmbed) returned a view tensor. An in-place op on this view (e.g., `x += y`) will "
    "silently drop the pre-backward hook and skip the all-gather, which can cause backward to fail or produce wrong "
    "gradients. Use out-of-place ops (`out = out + y`, not `out += y`) or `.clone()` the output before any in-place op.\n"
    "  output = self._register_pre_backward_hook(output)\n"
    "[rank0]: RuntimeError: setStorage: sizes [768, 3, 16, 16], strides [768, 256, 16, 1], storage offset 0, and "
    "itemsize 4 requiring a storage size of 2359296 are out of bounds for storage of size 0\n",
])
def test_second_wordings(text):
    assert sig(text) == "fsdp2-unsharded-param-freed"


@pytest.mark.parametrize("text", [
    # diffusers' train_text_to_image.py log_validation (kopyl/debug-unet-sampling-diffusers): an empty storage with no
    # FSDP in the run; DeepSpeed's ZeRO-3 empties partitioned parameters too
    "setStorage: sizes [320, 1280], strides [1, 320], storage offset 6080, and itemsize 2 requiring a storage size of "
    "831360 are out of bounds for storage of size 0\n",
    # a vLLM KV-cache reshape over a storage too small, not an empty one
    "RuntimeError: setStorage: sizes [250197, 2, 16, 2, 288], strides [65536, 9216, 576, 288, 1], storage offset 0, "
    "and itemsize 1 requiring a storage size of 16396863488 are out of bounds for storage of size 5465636864\n",
    # a training worker's task (celery's log of the RuntimeError): a storage smaller than the view, not an empty one
    "slm_worker    | Task train_model_task raised unexpected: RuntimeError('setStorage: sizes [4663296], strides [1], storage offset 0, and itemsize 2 requiring a storage size "
    "of 9326592 are out of bounds for storage of size 8706048')\n",
    # FSDP1's own assertion at reshard (huggingface/accelerate#2301): an unsharded flat parameter already freed, its
    # own words, not ATen's check
    "  File \"$CONDA_PREFIX/lib/python3.10/site-packages/torch/distributed/fsdp/_flat_param.py\", line 2559, in "
    "_check_storage_allocated\n"
    "    _p_assert(storage_size > 0, \"Expects storage to be allocated\")\n",
])
def test_near_misses(text):
    assert sig(text) != "fsdp2-unsharded-param-freed"


def test_translated_and_final():
    translated_and_final(NEW)

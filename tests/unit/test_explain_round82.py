"""Round 82's rules (issue 45), from errors a training script raises only when run on several GPUs: DeepSpeed
0.14.1/0.14.2's ZeRO-3 step with the optimizer offloaded multiplying CPU gradients by a clip factor left on the GPU
(ds-offload-grad-norm-device, read with DeepSpeed's own source line of unscale_and_clip_grads), and Lightning's own
words for DDP's unused parameters (its DDPStrategy replaces torch's reducer message; ddp-unused-params). A second
wording of each, in another version's or caller's words than the corpus case it was written from, and near misses
that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("ds-offload-grad-norm-device",)

_Z3_LINE = "self.fp32_partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)"


@pytest.mark.parametrize("text,expected", [
    # FreedomIntelligence/HuatuoGPT-o1#9: accelerate launch with a ZeRO-3 config on 8 GPUs, the [rank0] prefix of torch
    # 2.4, stage3.py of another DeepSpeed build (step at line 2053, unscale_and_clip_grads at 2123)
    ("[rank0]:   File \"/usr/local/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py\", line 2053, in step\n"
     "[rank0]:     self.unscale_and_clip_grads(sub_group_id, scaled_global_grad_norm)\n"
     "[rank0]:   File \"/usr/local/lib/python3.10/site-packages/deepspeed/utils/nvtx.py\", line 15, in wrapped_fn\n"
     "[rank0]:     ret_val = func(*args, **kwargs)\n"
     "[rank0]:   File \"/usr/local/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py\", line 2123, in "
     "unscale_and_clip_grads\n"
     f"[rank0]:     {_Z3_LINE}\n"
     "[rank0]: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
     "cpu!\n", "ds-offload-grad-norm-device"),
    # DeepSpeed 0.14.2's frames (stage3.py, step at line 2047, unscale_and_clip_grads at 2117) as two ranks'
    # tracebacks interleave: another rank's frame between the source line and the error
    ("  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py\", line 2117, in "
     "unscale_and_clip_grads\n"
     f"    {_Z3_LINE}\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py\", line 2047, in step\n"
     "    self.unscale_and_clip_grads(sub_group_id, scaled_global_grad_norm)\n"
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:3 and cpu!\n",
     "ds-offload-grad-norm-device"),
    # Lightning's words under torch 2.x's rank prefix (chemprop/chemprop#853, a LightningModule trained on 4 GPUs)
    ("RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss "
     "returned by training_step. If this is intentional, you must enable the detection of unused parameters in DDP, "
     "either by setting the string value `strategy='ddp_find_unused_parameters_true'` or by setting the flag in the "
     "strategy with `strategy=DDPStrategy(find_unused_parameters=True)`.\n"
     "[rank3]: Traceback (most recent call last):\n"
     "[rank3]:   File \"/home/askuhn/miniforge3/envs/chemprop/bin/chemprop\", line 8, in <module>\n"
     "[rank3]:     sys.exit(main())\n", "ddp-unused-params"),
    # the spawn strategy's wording (Lightning's DDPSpawnStrategy.on_exception, ddp_spawn.py, since 2.0)
    ("[rank1]: RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss "
     "returned by training_step. If this is intentional, you must enable the detection of unused parameters in DDP, "
     "either by setting the string value `strategy='ddp_spawn_find_unused_parameters_true'` or by setting the flag in "
     "the strategy with `strategy=DDPSpawnStrategy(find_unused_parameters=True)`.\n", "ddp-unused-params"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # ZeRO-1/2's own unscale_and_clip_grads (stage_1_and_2.py, `grad.data.mul_(1. / combined_scale)`): not the ZeRO-3
    # regression; left to device-mismatch
    ("  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage_1_and_2.py\", line 1974, in "
     "unscale_and_clip_grads\n"
     "    grad.data.mul_(1. / combined_scale)\n"
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "ds-offload-grad-norm-device"),
    # the ZeRO-3 line with two GPUs named: no offload in it
    (f"    {_Z3_LINE}\n"
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and "
     "cuda:0!\n", "ds-offload-grad-norm-device"),
    # the ZeRO-3 line followed by another error (the step out of GPU memory)
    (f"    {_Z3_LINE}\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
     "capacity)\n", "ds-offload-grad-norm-device"),
    # the error quoted alone, without DeepSpeed's frame (the revert commit bc48371's message): device-mismatch's
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:3 and cpu!\n",
     "ds-offload-grad-norm-device"),
    # torch's reducer warning that find_unused_parameters=True found none (shubham-goel/4D-Humans#115): no failure
    ("[W reducer.cpp:1303] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any "
     "unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every "
     "iteration,  which can adversely affect performance. If your model indeed never has any unused parameters in the "
     "forward pass, consider turning this flag off. Note that this warning may be a false positive if your model has "
     "flow control causing later iterations to have unused parameters. (function operator())\n", "ddp-unused-params"),
    # Lightning's own suggestion after a DDP run (strategies/ddp.py, teardown): static graph, no failure
    ("Your model can run with static graph optimizations. For future training runs, we suggest you pass "
     "`Trainer(..., strategy=DDPStrategy(static_graph=True))` to enable them.\n", "ddp-unused-params"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_quoted_error_alone_stays_device_mismatch():
    assert sig("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:3 "
               "and cpu!\n") == "device-mismatch"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
    # Lightning's entry of ddp-unused-params: its own texts translated, no restart offered
    lightning = [s for s in explain.SIGNATURES if s.name == "ddp-unused-params" and "Lightning" in s.cause]
    assert len(lightning) == 1
    assert lightning[0].cause in FAILURES_ZH and lightning[0].fix in FAILURES_ZH
    assert not lightning[0].retry

"""Round 15's rules (issue 45), sigtraining.py: a second wording of each, in another version's or another caller's
words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # accelerate's check for any model spread by device_map='auto' under a distributed launch
    ("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. "
     "Please rerun your script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.\n",
     "quantized-model-placement"),
    # its later wording naming 8-bit or 4-bit, a model spread over several GPUs
    ("ValueError: You can't train a model that has been loaded in 8-bit or 4-bit precision on multiple devices in any "
     "distributed mode.\n", "quantized-model-placement"),
    # FSDP's older check, on the FlatParameter itself (torch 1.13/2.0)
    ("ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32\n",
     "fsdp-mixed-dtype"),
    # CUDA touched in a multiprocessing Pool's forked worker (a datasets map with num_proc)
    ("multiprocess.pool.RemoteTraceback:\nRuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
     "with multiprocessing, you must use the 'spawn' start method\n", "cuda-fork"),
    # the wrapper's message when one rank runs a barrier where another broadcasts
    ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
     "CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: "
     "CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).\n", "collective-mismatch"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # transformers' own refusal of an 8-bit model in the Trainer (no adapters) is not about its placement
    ("ValueError: The model you want to train is loaded in 8-bit precision.  if you want to fine-tune an 8-bit model, "
     "please make sure that you have installed `bitsandbytes>=0.37.0`.\n", "quantized-model-placement"),
    # FSDP's other flat-parameter check: mixed requires_grad is no mixed dtype
    ("ValueError: Must flatten tensors with uniform requires_grad when use_orig_params=False\n", "fsdp-mixed-dtype"),
    # CUDA failing to initialize for another reason (no driver) is no fork
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
     "driver\n", "cuda-fork"),
    # a collective that timed out is no mismatch the wrapper detected
    ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1) ran "
     "for 1800000 milliseconds before timing out.\n", "collective-mismatch"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected

"""Round 210's rules (issue 45, live on one H100: failures only a GPU shows): a Dataset returning CUDA tensors to a
DataLoader that pins memory (pin-memory-cuda-tensor), a cuBLAS call failing after an earlier kernel's fault or for want
of memory (cublas-after-fault: an embedding looked up past its table showed only this), and an attribute DeepSpeed's
optimizer wrapper lacks (ds-optimizer-wrapper-attribute: optimizer.cur_scale on 0.19's fp16 optimizer without ZeRO).
The cases' own logs (captured on the GPU), second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("pin-memory-cuda-tensor", "cublas-after-fault", "ds-optimizer-wrapper-attribute")
DATA = Path(__file__).resolve().parents[1] / "data"
LIVE = DATA / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW)
    assert "CUDA_LAUNCH_BLOCKING=1" in by_name["cublas-after-fault"].fix
    assert "optimizer.loss_scale" in by_name["ds-optimizer-wrapper-attribute"].fix


@pytest.mark.parametrize("case, name", [
    ("live-gpu-visible-devices-set-in-script", "no-gpu"),
    ("live-gpu-oom-full-vocab-logits", "cuda-oom"),
    ("live-gpu-fork-workers-cuda-dataset", "cuda-fork"),
    ("live-gpu-pin-memory-cuda-samples", "pin-memory-cuda-tensor"),
    ("live-gpu-nccl-allreduce-cpu-tensor", "collective-cpu-tensor"),
    ("live-gpu-two-ranks-one-gpu", "invalid-device-ordinal"),
    ("live-gpu-zero-offload-torch-adamw", "ds-config-invalid"),
    ("live-gpu-ce-one-based-labels", "device-assert"),
    ("live-gpu-batch-left-on-cpu", "device-mismatch"),
    ("live-gpu-fp16-cur-scale-stage0", "ds-optimizer-wrapper-attribute"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


def test_the_embedding_past_its_table_on_the_gpu():
    """Captured on the H100 (its run's files did not all come back, so it is an explain log, not a case): token ids
    past the embedding's rows surfaced only as cuBLAS failing to create its handle at the next Linear."""
    assert sig((DATA / "explain" / "cublas-after-fault.log").read_text(encoding="utf-8")) == "cublas-after-fault"


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # a half tensor in a dict batch, pinned by the DataLoader's pin-memory thread
    (_TB + "RuntimeError: Caught RuntimeError in pin memory thread for device 0.\nOriginal Traceback (most recent "
     "call last):\n  File \"/opt/torch/utils/data/_utils/pin_memory.py\", line 57, in pin_memory\n"
     "    return data.pin_memory()\nRuntimeError: cannot pin 'torch.cuda.HalfTensor' only dense CPU tensors can be "
     "pinned\n", "pin-memory-cuda-tensor"),
    # the fault after the fact, in a batched matmul; and cuBLAS without memory for its handle
    (_TB + "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemmStridedBatched( "
     "handle, opa, opb, m, n, k, &alpha, a, lda, stridea, b, ldb, strideb, &beta, c, ldc, stridec, num_batches)`\n",
     "cublas-after-fault"),
    (_TB + "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
     "cublas-after-fault"),
    # ZeRO-3's optimizer asked for another attribute
    (_TB + "AttributeError: 'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'cur_scale'\n",
     "ds-optimizer-wrapper-attribute"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # bf16 on a GPU without it: NOT_SUPPORTED is precision-unsupported's
    (_TB + "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, "
     "opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF)`\n",
     "cublas-after-fault"),
    # a pinned-memory allocation that failed: not a CUDA tensor given to pin
    (_TB + "RuntimeError: cannot pin memory: CUDA error: out of memory\n", "pin-memory-cuda-tensor"),
    # add_param_group has its own answer (round 215's); a torch optimizer's missing attribute is not DeepSpeed's
    (_TB + "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'add_param_group'\n",
     "ds-optimizer-wrapper-attribute"),
    (_TB + "AttributeError: 'AdamW' object has no attribute 'cur_scale'\n", "ds-optimizer-wrapper-attribute"),
])
def test_near_misses(text, name):
    assert sig(text) != name

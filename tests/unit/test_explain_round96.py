"""Round 96's rule (issue 45), from recent (2025-2026) multi-GPU training threads: NCCL's kernels asking for more shared
memory per block than the GPU gives (NCCL's 'exceeds device/fn maxSharedMem' as it sets them up, src/enqueue.cc's
ncclInitKernelsForDevice: NCCL 2.25.1 on GeForce RTX 50-series cards), read where it stands before torch's vague
`unhandled cuda error`: second wordings in other NCCL versions' words and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nccl-blackwell-shared-mem",)


@pytest.mark.parametrize("text,expected", [
    # NVIDIA/nccl#1637 (two RTX 5090, NCCL 2.25.1, NCCL_DEBUG=INFO): 2.25's INFO line, then torch's DistBackendError
    # (ProcessGroupNCCL's words) as a rank prints it: the whole shape of the log
    ("localhost:11326:11326 [0] NCCL INFO NCCL version 2.25.1+cuda12.2\n"
     "localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
     "localhost:11344:11344 [1] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
     "[rank1]: Traceback (most recent call last):\n"
     "[rank1]:   File \"/work/train.py\", line 40, in <module>\n"
     "[rank1]:     dist.all_reduce(t)\n"
     "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1\n"
     "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.\n", "nccl-blackwell-shared-mem"),
    # NCCL 2.26's WARN of the same check (enqueue.cc: "cudaArch %d ncclMaxSharedMem %d exceeds device/fn maxSharedMem
    # %zu", returning ncclSystemError), then torch's `unhandled system error`
    ("node1:2201:2240 [0] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem "
     "79856\n"
     "node1:2201:2240 [0] NCCL INFO init.cc:1420 -> 2\n"
     "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
     "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n",
     "nccl-blackwell-shared-mem"),
    # later releases' wording ("cudaArch %d dynamic smem %d exceeds device/fn maxSharedMem %d") quoted by torch after
    # "Last error:" (NCCLUtils: ncclGetLastError) without NCCL_DEBUG
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2040, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.3\n"
     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
     "Last error:\n"
     "cudaArch 1200 dynamic smem 82432 exceeds device/fn maxSharedMem 79856\n", "nccl-blackwell-shared-mem"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the corpus case's own shape: torch's error naming NCCL 2.25.1 without NCCL's line does not show the GPU nor the
    # shared memory check (2.25.1's `unhandled cuda error` has other causes on other GPUs)
    ("[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:3396, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1\n"
     "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.\n", "nccl-blackwell-shared-mem"),
    # Triton's kernel asking too much shared memory (triton/runtime/errors.py OutOfResources): a compiled kernel's
    # tile sizes, not NCCL's
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 114688, Hardware limit: 101376. "
     "Reducing block sizes or `num_stages` may help.\n", "nccl-blackwell-shared-mem"),
    # CUDA's launch error for a kernel's resources (an application's own kernel)
    ("RuntimeError: CUDA error: too many resources requested for launch\n"
     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
     "incorrect.\n", "nccl-blackwell-shared-mem"),
    # round 67's kernels missing for the GPU stay theirs (the same file's other set-up failure)
    ("c76d92cccb6e:72:457 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n"
     "c76d92cccb6e:72:457 [1] NCCL INFO init.cc:1475 -> 1\n", "nccl-blackwell-shared-mem"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_kernels_missing_stay_nccl_arch_missing():
    assert sig("c76d92cccb6e:72:457 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n") \
        == "nccl-arch-missing"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 150's rule (issue 45), from threads of multi-node training in containers (Docker, enroot/pyxis under Slurm,
Singularity): nccl-tests' CUDACHECK reporting CUDA's "unknown error" as it lists the devices, CUDA failing to
initialise (in pyxis#81 the host had not loaded nvidia_uvm), read as cuda-init-unknown; a second wording of it, in
another version's or caller's words than the corpus case it was written from, and near misses that must not be read
as it."""

import pytest
from explain_rounds import sig


@pytest.mark.parametrize("text", [
    # nccl-tests' CUDACHECK (src/common.h: "%s: Test CUDA failure %s:%d '%s'") after the older "#   Rank  0 Pid"
    # listing of run() in src/common.cu, another line of common.cu
    ("# Using devices\n"
     "#   Rank  0 Pid  20311 on     gpu-a1 device  0 [0x07] NVIDIA A100-SXM4-40GB\n"
     "gpu-a1: Test CUDA failure common.cu:892 'unknown error'\n"
     " .. gpu-a1 pid 20311: Test failure common.cu:842\n"),
    # the newer "#  Rank  0 Group  0 Pid" listing, under mpirun (the MPI_Abort wording of other CUDACHECKs)
    ("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
     "validation: 1 graph: 0\n"
     "#\n"
     "# Using devices\n"
     "#  Rank  0 Group  0 Pid   9688 on node-1 device  0 [0x01] NVIDIA H100 80GB HBM3\n"
     "node-1: Test CUDA failure common.cu:1010 'unknown error'\n"),
])
def test_nccl_tests_unknown_error_at_device_listing(text):
    assert sig(text) == "cuda-init-unknown"


@pytest.mark.parametrize("text", [
    # the same CUDACHECK once the results table has begun: a kernel's or a collective's fault, not initialisation
    ("# Using devices\n"
     "#  Rank  0 Group  0 Pid  41102 on node-1 device  0 [0x18] Tesla V100-SXM2-32GB\n"
     "#\n"
     "#                                                              out-of-place                       in-place\n"
     "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
     "#wrong\n"
     "node-1: Test CUDA failure common.cu:376 'unknown error'\n"),
    # another CUDA error at the device listing (memory, not the driver's state)
    ("# Using devices\n"
     "node-2: Test CUDA failure common.cu:1045 'out of memory'\n"),
    # NCCLCHECK's words at the same place (src/common.h: "%s: Test NCCL failure %s:%d '%s / %s'")
    ("# Using devices\n"
     "#  Rank  0 Group  0 Pid  5121 on node-3 device  0 [0x4f] NVIDIA A100-SXM4-80GB\n"
     "node-3: Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n"),
])
def test_near_misses_are_not_cuda_init_unknown(text):
    assert sig(text) != "cuda-init-unknown"

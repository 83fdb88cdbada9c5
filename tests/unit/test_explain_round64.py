"""Round 64's rules (issue 45), from threads whose posted log carries an NCCL error as torch reports it: NCCL 2.12 and
older failing a collective's launch with CUDA's 'invalid resource handle' when the rank never selected its GPU, and
torch's synchronous 'NCCL error in: FILE:LINE, unhandled system error' (ncclSystemError) read as a failed system call
of this rank (a symptom: /dev/shm, a socket) rather than another rank's exit: a second wording of each, in another
version's, project's or thread's words than the corpus case it was written from, and near misses that must not be
read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nccl-stream-other-device", "nccl-system-call")


@pytest.mark.parametrize("text,expected", [
    # a later NCCL's CUDACHECK wording with the CUDA error number (cudaErrorInvalidResourceHandle = 400), the
    # timestamped prefix of NCCL 2.23+, and the whole shape a user posts: the WARN line, then torch's vague error
    ("[2025-03-02 10:11:12] gpu-node-3:4412:4412 [1] enqueue.cc:1085 NCCL WARN Cuda failure 400 'invalid resource "
     "handle'\n"
     "gpu-node-3:4412:4412 [1] NCCL INFO group.cc:475 -> 1\n"
     "[rank1]: Traceback (most recent call last):\n"
     "[rank1]:   File \"/workspace/train.py\", line 31, in <module>\n"
     "[rank1]:     dist.all_reduce(t)\n"
     "[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:2411, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
     "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.\n", "nccl-stream-other-device"),
    # NCCL 2.12's line of the kernel launch itself (v2.12.10-1 src/enqueue.cc:334, cudaLaunchKernel on the stream)
    # before torch 1.13's RuntimeError
    ("trainer-0:812:812 [0] enqueue.cc:334 NCCL WARN Cuda failure 'invalid resource handle'\n"
     "trainer-0:812:812 [0] NCCL INFO enqueue.cc:1382 -> 1\n"
     "Traceback (most recent call last):\n"
     "  File \"ddp.py\", line 40, in <module>\n"
     "    dist.barrier()\n"
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error, "
     "NCCL version 2.12.10\n"
     "ncclUnhandledCudaError: Call to CUDA function failed.\n", "nccl-stream-other-device"),
    # vLLM's tensor-parallel workers (vllm-project/vllm#4618's shape): torch 2.3's words under vLLM's worker prefix
    ("(RayWorkerWrapper pid=5486) ERROR 05-06 08:55:19 worker_base.py:145] torch.distributed.DistBackendError: NCCL "
     "error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with "
     "NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n", "nccl-system-call"),
    # torch 2.7's file (NCCLUtils.cpp) under vLLM V1's worker prefix (gpustack/gpustack#3573's first line)
    ("(VllmWorker TP1 pid=17760) ERROR 11-27 10:18:36 [multiproc_executor.py:596] torch.distributed.DistBackendError: "
     "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled system error (run with "
     "NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n", "nccl-system-call"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NCCL's CUDA IPC handle of the P2P transport (ray-project/ray_lightning#24): peer access, not a stream's device
    ("(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer "
     "access is not supported between these two devices\n", "nccl-stream-other-device"),
    # the same enqueue.cc CUDACHECK failing on memory (PKU-YuanGroup/Open-Sora-Plan#386)
    ("ins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'\n",
     "nccl-stream-other-device"),
    # PyTorch's own CUDA check of a kernel, not NCCL's launch
    ("RuntimeError: CUDA error: invalid resource handle\nCUDA kernel errors might be asynchronously reported at some "
     "other API call, so the stacktrace below might be incorrect.\n", "nccl-stream-other-device"),
    # torch's watchdog reporting an asynchronous NCCL error of a peer (tatsu-lab/stanford_alpaca#207): ncclRemoteError
    ("terminate called after throwing an instance of 'std::runtime_error' what(): NCCL error: remote process exited "
     "or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed possibly due to a network "
     "error or a remote process exiting prematurely. Last error: NET/IB : Got completion from peer "
     "11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129\n", "nccl-system-call"),
    # an internal error's words (NVIDIA/nccl#1546), not a system call's
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
     "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\n"
     "ncclInternalError: Internal check failed.\n", "nccl-system-call"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    by_name = translated_and_final(NEW)
    assert by_name["nccl-system-call"].symptom and not by_name["nccl-stream-other-device"].symptom

"""Round 124's rule (issue 45), from GPU hardware and driver faults of multi-GPU training: the round's held-out cases
(a MIG pair under DDP, CUDA's unknown error at init, an H200 host's Fabric Manager not ready) were all right when
measured and its one tune miss (nccl-tests' rank exiting 3 on a node whose X server held the peer mappings) shows
nothing that would tell it. What the search returned besides, in threads whose cause was not established, are wordings
of a failed GPU the table did not read: CUDA's cudaErrorNvlinkUncorrectable (its string, under torch, the driver API's
name), the driver's Xid 48 text and its probe's words for a GPU off the bus, now gpu-hardware, also in the lines before
a rank's vague NCCL error (signatures.BEFORE_THE_ERROR). Near misses: nvidia-smi's and NVML's ECC counters, Xid lines of
an application's own fault, NCCL's NVLS failure."""

import json

import pytest
from explain_rounds import SRC, sig

from dscluster import explain


@pytest.mark.parametrize("text", [
    # MIC-DKFZ/nnUNet#1519 (the error as its title quotes it): CUDA's string for cudaErrorNvlinkUncorrectable
    "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n",
    # torch's watchdog (ProcessGroupNCCL.cpp, the words of NVIDIA-NeMo/Megatron-Bridge#836's line) with that string
    "[rank29]:[E1002 12:20:55.123831168 ProcessGroupNCCL.cpp:1923] [PG ID 5 PG GUID 83(TENSOR_MODEL_PARALLEL_GROUP) "
    "Rank 1] Process group watchdog thread terminated with exception: CUDA error: uncorrectable NVLink error detected "
    "during the execution\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n",
    # the driver API's name, in CuPy's CUDADriverError format ("NAME: string", as in fairy-stockfish's thread)
    "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NVLINK_UNCORRECTABLE: uncorrectable NVLink error "
    "detected during the execution\n",
    # NVIDIA/gpu-operator#1146's syslog: the driver's Xid 48 (double bit ECC error in the framebuffer)
    "Dec  2 10:43:35 worker4 kernel: [240314.528856] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, "
    "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdd60000 "
    "partition\n",
    # NVIDIA/NVSentinel#155's dmesg: the driver's probe finding the GPU gone (no Xid line, 'has' on the line above)
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
    "               NVRM: fallen off the bus and is not responding to commands.\n"
    "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n",
])
def test_second_wordings(text):
    assert sig(text) == "gpu-hardware"


def test_read_before_a_ranks_vague_nccl_error():
    # the whole shape a user posts: NCCL's CUDACHECK (checks.h, "Cuda failure '%s'") on the NVLink error, init's return
    # codes, then torch's DistBackendError `unhandled cuda error` (NCCLUtils' words), composed from those formats
    text = ("gpu07:4411:4490 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM\n"
            "gpu07:4411:4490 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 'uncorrectable NVLink error detected "
            "during the execution'\n"
            "gpu07:4411:4490 [3] NCCL INFO init.cc:1532 -> 1\n"
            "[rank3]: Traceback (most recent call last):\n"
            "[rank3]:   File \"/work/train.py\", line 30, in <module>\n"
            "[rank3]:     dist.barrier()\n"
            "[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
            "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
            "[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.\n")
    assert sig(text) == "gpu-hardware"


@pytest.mark.parametrize("text", [
    # nvidia-smi's table header (facebookresearch/Detectron#32): a column, not an error
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n",
    # nvidia-smi -q's ECC section (recent drivers) and an older driver's "Double Bit" counters, all zero
    "    ECC Errors\n        Volatile\n            SRAM Correctable            : 0\n"
    "            SRAM Uncorrectable          : 0\n            DRAM Correctable            : 0\n"
    "            DRAM Uncorrectable          : 0\n",
    "        Double Bit\n            Device Memory               : 0\n            Register File               : 0\n"
    "            Total                       : 0\n",
    # NVML's query fields, clean (marin-community/marin#7344)
    "What NVML *does* expose, we already sample at wedge time, and it is **clean**: "
    "`ecc.errors.uncorrected.volatile.total = 0`, `ecc.errors.uncorrected.aggregate.total = 0`, "
    "`remapped_rows.pending = No`, `remapped_rows.failure = No`, `clocks_event_reasons.hw_slowdown = Not Active`.\n",
    # Xid 13 and Xid 31, an application's own fault (leptonai/gpud#46, akash-network/support#244), not the GPU's
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
    "Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n",
    "[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch 00000008, intr "
    "00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_8 faulted @ 0x73ac_1c000000. Fault is of type FAULT_PDE "
    "ACCESS_TYPE_VIRT_WRITE\n",
    # NCCL's NVLS set-up failing on an NVSwitch system (NVIDIA/nccl#1705): the fabric's state, not a failed GPU
    "[2025-05-10 23:09:41] bm-h100-02:630335:630409 [2] transport/nvls.cc:254 NCCL WARN Cuda failure 1 'invalid "
    "argument'\nbm-h100-02:630335:630408 [1] NCCL INFO transport/nvls.cc:409 -> 1\n",
])
def test_near_misses(text):
    assert sig(text) != "gpu-hardware"


def test_the_cause_is_translated_and_final():
    zh = json.loads((SRC / "locale" / "zh_TW" / "explain.json").read_text(encoding="utf-8"))
    s = next(s for s in explain.SIGNATURES if s.name == "gpu-hardware")
    assert s.cause in zh and s.fix in zh
    assert not s.retry

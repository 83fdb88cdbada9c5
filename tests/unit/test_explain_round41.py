"""Round 41's rules (issue 45), from the threads of fabrics and accelerators other than NVIDIA GPUs on
InfiniBand/Ethernet (sigfabrics.py): AWS EFA through Libfabric and aws-ofi-nccl, AMD GPUs under ROCm. A second wording
of each, in another version's or another caller's words than the corpus case it was written from, and near misses
that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigfabrics import FABRIC_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # aws-ofi-nccl's older sendrecv/rdma init (another line number), a rank's NCCL prefix, then the plugin giving up
    ("ip-10-0-1-5:812:840 [3] nccl_net_ofi_init:1479 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data "
     "available\nip-10-0-1-5:812:840 [3] nccl_net_ofi_create_plugin:341 NCCL WARN NET/OFI aws-ofi-nccl "
     "initialization failed\n", "efa-no-device"),
    # (Libfabric's core warning `fi_getinfo: provider efa output empty list` was here: its thread, aws/aws-ofi-nccl#889,
    # is a p4d.24xlarge whose EFA domains were then created, so it is a near miss now, test_explain_nearmisses5.py.)
    # aws-ofi-nccl 1.1's words for the same (find_ofi_provider) in the plugin's test program
    ("WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider\n"
     "WARN: Function: main Line: 66: NET/OFI OFI NCCL failure: 2\n", "efa-no-device"),
    # the plugin's rdma protocol's own function name and another device
    ("node-3:4410:4521 [5] register_rail_mr_buffer:702 NCCL WARN NET/OFI Unable to register memory (type = 2) for "
     "device 1. RC: -22, Error: Invalid argument\n", "efa-cuda-memreg"),
    # Libfabric's sync-memops warning from another build (line number, pid)
    ("libfabric:31337:1710000000::core:core:cuda_set_sync_memops():210<warn> Failed to perform "
     "cuPointerSetAttribute: CUDA_ERROR_NOT_SUPPORTED:operation not supported\n", "efa-cuda-memreg"),
    # older Libfabric (rxr) failing its RX packet pool with ENOMEM
    ("libfabric:718892:1658904526::efa:cq:rxr_ep_grow_rx_pkt_pools():1585<warn> cannot allocate memory for EFA's RX "
     "packet pool. error: Cannot allocate memory\n", "efa-memlock"),
    # the abort banner as a rank prints it, each line prefixed
    ("[rank3]: Libfabric EFA provider has encountered an internal error:\n[rank3]:\n"
     "[rank3]: Libfabric error: (-12) Cannot allocate memory\n"
     "[rank3]: EFA internal error: (4112) Failure to post internal receive buffers\n", "efa-memlock"),
    # torch on ROCm with no device, and HIP's name in another program
    ("RuntimeError: HIP error: no ROCm-capable device is detected\nHIP kernel errors might be asynchronously "
     "reported at some other API call\n", "rocm-no-device"),
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  hipGetDeviceCount failed: "
     "hipErrorNoDevice\n", "rocm-no-device"),
    # rocminfo in a container without /dev/kfd, another ROCm release
    ("ROCk module version 6.8.5 is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n",
     "rocm-no-device"),
    # rocminfo on a host where the user is not in the group that owns /dev/kfd
    ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Operation not permitted\n", "rocm-kfd-permission"),
    ("ROCk module version 6.8.5 is loaded\nUnable to open /dev/kfd read-write: Permission denied\n",
     "rocm-kfd-permission"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # fi_getinfo failing for another reason, or the plugin's harmless info lines about its providers
    ("NCCL WARN NET/OFI OFI fi_getinfo() call failed: Invalid argument\n", "efa-no-device"),
    ("fi_getinfo: -22 (Invalid argument)\n", "efa-no-device"),
    ("ip-10-0-1-5:812:840 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n", "efa-no-device"),
    # a host buffer (type = 1), or a GPU buffer refused for lack of memory: not the sync-memops bug
    ("register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 1) for device 0. RC: -22, Error: "
     "Invalid argument\n", "efa-cuda-memreg"),
    ("register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -12, "
     "Error: Cannot allocate memory\n", "efa-cuda-memreg"),
    # another EFA internal error, and an ENOMEM that is not the receive buffers'
    ("Libfabric error: (-12) Cannot allocate memory\nEFA internal error: (4114) Failure to post work request(s) to "
     "send queue\n", "efa-memlock"),
    ("Libfabric error: (-5) Input/output error\nEFA internal error: (4112) Failure to post internal receive "
     "buffers\n", "efa-memlock"),
    # another device file missing, and HIP's other errors
    ("Unable to open /dev/dri/renderD128: No such file or directory\n", "rocm-no-device"),
    ("RuntimeError: HIP error: invalid device function\n", "rocm-no-device"),
    ("RuntimeError: HIP error: hipErrorOutOfMemory\n", "rocm-no-device"),
    # /dev/kfd opened fine; a permission error of another file
    ("ROCk module is loaded\n=====================\nHSA System Attributes\n", "rocm-kfd-permission"),
    ("PermissionError: [Errno 13] Permission denied: '/dev/shm/torch_123'\n", "rocm-kfd-permission"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("mlx5_0:1 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n") == \
        "nccl-ib-memlock"
    assert sig("RuntimeError: CUDA error: invalid device ordinal\n") == "invalid-device-ordinal"
    zh = FAILURES_ZH
    for s in FABRIC_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("fi_getinfo: -61 (No data available)\n").retry is False

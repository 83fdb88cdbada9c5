"""Round 98's rules (issue 45), from threads on multi-node network fabric failures under training (InfiniBand/RoCE,
GPUDirect RDMA, AWS EFA): an InfiniBand work request NCCL posted completing with status 4, a local protection error,
which NCCL's own hint and its maintainers trace to PCIe ACS breaking GPUDirect RDMA (before: nccl-ib, whose advice is
the GID index, the adapters and the links), and the EFA peers unable to reach each other for want of the security
group's rules naming itself (before: python-error). A second wording of each, in another NCCL or aws-ofi-nccl
release's or caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ib-completion-acs", "efa-security-group")

_TORCH_SYSTEM_ERROR = (
    "Traceback (most recent call last):\n"
    "  File \"train.py\", line 52, in <module>\n"
    "    dist.all_reduce(grad)\n"
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")


@pytest.mark.parametrize("text,expected", [
    # NVIDIA/nccl#523 (NCCL 2.9, torch training with GPUDirect RDMA on Kubernetes): the completion without the peer
    ("[0] transport/net_ib.cc:818 NCCL WARN NET/IB : Got completion with error 4, opcode 0, len 32694, vendor err 81\n",
     "ib-completion-acs"),
    # NVIDIA/nccl#214 (NCCL 2.4, nccl-tests with nv_peer_mem loaded): the .cu file of those releases
    ("transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, len 21938, vendor err 81\n",
     "ib-completion-acs"),
    # NVIDIA/nccl#1052 (NCCL 2.18, H800 with nv_peer_mem): an empty peer, RoCE's GIDs after it; then torch's
    # vague error, the whole shape a rank's log shows
    ("transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 4, opcode 0, len 0, vendor err 81 "
     "(Send) localGid ::ffff: remoteGid ::ffff:\n" + _TORCH_SYSTEM_ERROR, "ib-completion-acs"),
    # NCCL 2.20-2.27's format (net_ib.cc: "with status=%d opcode=%d len=%d vendor err %d (%s)"), composed from it
    ("node3:5120:5301 [2] transport/net_ib.cc:2244 NCCL WARN NET/IB : Got completion from peer 10.20.0.7<45321> with "
     "status=4 opcode=0 len=0 vendor err 81 (Send) localGid ::ffff:10.20.0.3 remoteGids::ffff:10.20.0.7 hca mlx5_2\n",
     "ib-completion-acs"),
    # NCCL 2.28's words (p2p.cc ncclIbLogCompletionWithError, ibvWcStatusStr) and the hint it prints for the status
    # (common.h printIbWcStatusHint), composed from those formats
    ("node3:5120:5301 [2] NCCL WARN NET/IB: Got completion from peer 10.20.0.7<45321> with "
     "status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_SEND(0) vendor_err=81  hca mlx5_2\n"
     "node3:5120:5301 [2] NCCL INFO HINT: In many cases this error occurs when ACS is enabled which would break GPU "
     "Direct RDMA protocol.\n", "ib-completion-acs"),
    # torch 2.x quoting NCCL's last error after the watchdog found it (DeepSpeed#6875's shape, status 4)
    ("[rank4]:[E1229 16:47:25.333820755 ProcessGroupNCCL.cpp:541] [Rank 4] found async exception when checking for "
     "NCCL errors: NCCL error: remote process exited or there was a network error, NCCL version 2.22.3\n"
     "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
     "Last error:\n"
     "NET/IB: Got completion from peer 10.0.1.23<34696> with status=4 opcode=0 len=0 vendor err 81 (Recv) hca "
     "ibp152s0\n", "ib-completion-acs"),
    # aws-ofi-nccl's banner for FI_EHOSTUNREACH (src/platform-aws.cpp PlatformAWS::log_cq_error), composed from it
    ("ip-10-0-7-21:2210:2300 [2] NCCL WARN NET/OFI Request 0x7f2e54012340 (send) completed with error: err: 113, "
     "flags: 0, prov_errno: 4126, strerror: Unresponsive receiver, len: 0\n\n"
     "**********************************************************************\n"
     "* This error indicates that the security group on either this instance or the peer instance\n"
     "* is not setup correctly.  For more information, please see the AWS documentation at\n"
     "* https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html#nccl-start-base-setup\n"
     "**********************************************************************\n", "efa-security-group"),
    # gardener/gardener-extension-provider-aws#1832: Libfabric's EFA error as every NCCL/MPI job printed it there
    ("Error 4126: Unresponsive receiver (reachable by EFA device but handshake failed)\n", "efa-security-group"),
    # aws-ofi-nccl's RDMA protocol (nccl_ofi_rdma.cpp) and its connection manager (cm/nccl_ofi_cm_resources.cpp)
    ("ip-10-0-1-5:812:990 [0] NCCL WARN NET/OFI Unable to insert remote address into address vector for device 0. "
     "RC: Invalid argument\n", "efa-security-group"),
    ("ip-10-0-1-5:812:990 [0] NCCL WARN NET/OFI CM: Unable to insert remote address into address vector for "
     "device.\n", "efa-security-group"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NVIDIA/nccl#1698: status 12 (IBV_WC_RETRY_EXC_ERR), a transport retry timeout: nccl-ib's
    ("mycl-g2:353236:353423 [6] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer 192.168.3.5<53908> "
     "with status=12 opcode=129 len=1048576 vendor err 129 (Recv) localGid ::ffff:192.168.6.3 "
     "remoteGids::ffff:192.168.6.5 hca mlx5_10\n", "ib-completion-acs"),
    # deepspeedai/DeepSpeed#6875: status 5, a flushed request after another failure
    ("50428e4af543:34610:36821 [4] ib_plugin.c:1673 NCCL WARN NET/IB: Got completion from peer 10.0.1.23<34696> with "
     "status=5 opcode=0 len=0 vendor err 249 (Recv) hca ibp152s0\n", "ib-completion-acs"),
    # deepseek-ai/DeepEP#106: the older words with error 5
    ("VM-17-82-centos:11978:12642 [0] ib_plugin.c:1075 NCCL WARN NET/IB : Got completion from peer "
     "172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249\n", "ib-completion-acs"),
    # NVIDIA/nccl#426: error 12 on RoCE, a wrong GID index
    ("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, "
     "vendor err 129\n", "ib-completion-acs"),
    # NVIDIA/nccl#214's other environment: error 11 (IBV_WC_REM_OP_ERR)
    ("NCCL WARN NET/IB : Got completion with error 11, opcode 2, len 1048576, vendor err 137\n", "ib-completion-acs"),
    # NCCL's hints for the other statuses (common.h printIbWcStatusHint)
    ("NCCL INFO HINT: In many cases this error occurs when NIC on the same instance cannot talk to each other.\n",
     "ib-completion-acs"),
    ("NCCL INFO HINT: In many cases this error occurs when the NCCL_IB_TIMEOUT is set too short.\n",
     "ib-completion-acs"),
    # aws/aws-ofi-nccl#24: an address vector that could not be opened (Horovod on EFA, cause not the security group)
    ("[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open "
     "AV. RC: -22, ERROR: Invalid argument\n", "efa-security-group"),
    # aws/aws-ofi-nccl#161: a request failing on SageMaker g4dn without the banner
    ("NCCL WARN NET/OFI Request completed with error. RC: 21. Error: unknown error\n", "efa-security-group"),
    # the plugin's base log_cq_error (include/nccl_ofi_platform.h) for any other completion error
    ("ip-10-0-7-21:2210:2300 [2] NCCL WARN NET/OFI Request 0x7f2e54012340 (recv) completed with error: err: 5, flags: "
     "0, prov_errno: 15, strerror: Input/output error, len: 0\n", "efa-security-group"),
    # Libfabric found no EFA device: efa-no-device's, not the group's
    ("NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available\n", "efa-security-group"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_other_completion_errors_stay_nccl_ib():
    assert sig("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
               "opcode 1, len 0, vendor err 129\n" + _TORCH_SYSTEM_ERROR) == "nccl-ib"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

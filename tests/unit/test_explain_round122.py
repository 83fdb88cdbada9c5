"""Round 122's rule (issue 45), from the area of software that differs between the nodes of one run: the bootstrap of
NCCL (src/bootstrap.cc: "Message truncated : received %d bytes instead of %d", ncclInternalError) and NVSHMEM's copy of
it (modules/bootstrap/uid/bootstrap_uid.cpp bootstrap_net_recv, printed by DeepEP) receiving an init message of another
size than its build expects: the ranks do not run the same stack (deepseek-ai/DeepEP#121: two nodes with different
NVIDIA drivers). Second wordings in NCCL's and torch's words, read where they stand before torch's vague `internal
error`, and near misses from other components that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("bootstrap-message-truncated",)

_TORCH_INTERNAL = (
    "[rank3]: Traceback (most recent call last):\n"
    "[rank3]:   File \"/work/train.py\", line 22, in <module>\n"
    "[rank3]:     dist.barrier()\n"
    "[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "internal error - please report this issue to the NCCL developers, NCCL version 2.21.5\n"
    "[rank3]: ncclInternalError: Internal check failed.\n")


@pytest.mark.parametrize("text", [
    # NCCL's own WARN (bootstrap.cc socketRecv; the host:pid:tid prefix), its NCCLCHECK trace, then torch's vague error:
    # the whole shape a rank prints
    "gpu-b:7211:7290 [3] bootstrap.cc:224 NCCL WARN Message truncated : received 4264 bytes instead of 4232\n"
    "gpu-b:7211:7290 [3] NCCL INFO bootstrap.cc:612 -> 3\n"
    "gpu-b:7211:7290 [3] NCCL INFO init.cc:1412 -> 3\n" + _TORCH_INTERNAL,
    # torch quoting NCCL's last WARN after "Last error:" (no NCCL_DEBUG), the form of socketDoubleSendRecv (2.22+)
    _TORCH_INTERNAL + "[rank3]: Last error:\n[rank3]: Message truncated : received 96,96 bytes instead of 64,64\n",
    # NCCL 2.4's words, with the newline its WARN then carried, under the old RuntimeError of torch 1.x
    "node1:3021:3077 [0] bootstrap.cc:141 NCCL WARN Message truncated : received 2048 bytes instead of 1024\n\n"
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:400, internal error, NCCL version "
    "2.4.8\n",
    # NVSHMEM's bootstrap as another NVSHMEM user prints it (its source path as built into a wheel)
    "/opt/nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : received "
    "12 bytes instead of 8\n\n/opt/nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:499: non-zero status: -3 ",
])
def test_second_wordings(text):
    assert sig(text) == "bootstrap-message-truncated"


@pytest.mark.parametrize("text", [
    # NCCL's socket transport on the data path (src/transport/net_socket.cc): a collective whose sizes differ between
    # ranks, NCCL's own hint; not an init message of another build
    "gpu-a:5120:5170 [0] transport/net_socket.cc:636 NCCL WARN NET/Socket : peer 10.0.0.2<45122> message truncated : "
    "receiving 524288 bytes instead of 65536. If you believe your socket network is in a healthy state, there may be "
    "a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks\n",
    # MPICH's MPI_ERR_TRUNCATE (src/mpi/errhan/errnames.txt "**truncate %d %d"): the program's receive buffer
    "Fatal error in MPI_Recv: Message truncated, error stack:\nMPI_Recv(224): MPI_Recv(buf=0x7ffd, count=10, MPI_INT, "
    "src=0, tag=0, MPI_COMM_WORLD, status=0x1) failed\nMPIDI_CH3U_Receive_data_found(131): Message truncated; 400 "
    "bytes received but buffer size is 40\n",
    # Open MPI's error class text for the same
    "[node1:02211] *** An error occurred in MPI_Recv\n[node1:02211] *** reported by process [3211,0]\n"
    "[node1:02211] *** on communicator MPI_COMM_WORLD\n[node1:02211] *** MPI_ERR_TRUNCATE: message truncated\n",
])
def test_near_misses(text):
    assert sig(text) != "bootstrap-message-truncated"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 67's rules (issue 45), from HPC centres' and clusters' threads (a national cluster's NCCL built for its older
GPUs only, a university cluster's node names, a cloud HPC tutorial): NCCL finding none of its own kernels for the GPU
('named symbol not found' as it sets them up: a libnccl compiled without the GPU's architecture), and torch's
rendezvous-store client failing with No route to host read as the store's address out of reach (master-unreachable,
which names a wrong MASTER_ADDR and a firewall both) instead of a firewall alone: a second wording of each, in another
version's or caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nccl-arch-missing",)


@pytest.mark.parametrize("text,expected", [
    # NVIDIA/nccl#1528 (NCCL 2.2x, NCCL_DEBUG=INFO): both kernel set-up calls of enqueue.cc, then init's return codes
    ("c76d92cccb6e:72:457 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n"
     "c76d92cccb6e:72:457 [1] NCCL INFO init.cc:1475 -> 1\n"
     "c76d92cccb6e:72:457 [1] NCCL INFO group.cc:64 -> 1 [Async thread]\n", "nccl-arch-missing"),
    # a recent NCCL's CUDACHECK prints cudaErrorSymbolNotFound's number (checks.h: "Cuda failure %d '%s'"), from
    # enqueue.cc, then torch's DistBackendError (NCCLUtils' words): the whole shape of a rank's log, composed from
    # those formats
    ("node1:2201:2240 [0] enqueue.cc:62 NCCL WARN Cuda failure 500 'named symbol not found'\n"
     "node1:2201:2240 [0] NCCL INFO init.cc:1532 -> 1\n"
     "[rank0]: Traceback (most recent call last):\n"
     "[rank0]:   File \"/work/train.py\", line 30, in <module>\n"
     "[rank0]:     dist.barrier()\n"
     "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
     "[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n", "nccl-arch-missing"),
    # torch's own error without NCCL_DEBUG: NCCLUtils quotes NCCL's last WARN after "Last error:"
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
     "ncclUnhandledCudaError: Call to CUDA function failed.\n"
     "Last error:\n"
     "Cuda failure 'named symbol not found'\n", "nccl-arch-missing"),
    # torch 1.1x's c10d socket.cpp warning for the store client's connect (its "errno: N - strerror" form), to a
    # MASTER_ADDR with no route from this node
    ("[W socket.cpp:601] [c10d] The client socket has failed to connect to [gpu-a07]:29500 (errno: 113 - No route to "
     "host).\n", "master-unreachable"),
    # torch 2.x under a rank prefix: DistNetworkError from TCPStore, the name resolved to another network's address
    ("[rank3]: torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
     "(node01, 29500). The client socket has failed to connect to node01.mgmt.cluster:29500 (errno: 113 - No route to "
     "host).\n", "master-unreachable"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NVIDIA/nccl#2332: user-buffer registration on memory from CUDA's VMM API, the driver call's CUCHECK (register.cc),
    # which NCCL falls back from on cards that cannot register: not its kernels
    ("[1] nccl/src/register/register.cc:42 (ncclRegister) NCCL WARN Cuda failure 500 'named symbol not found'\n"
     "[1] NCCL INFO nccl/src/register/register.cc:161 (ncclCommRegister) -> 1\n", "nccl-arch-missing"),
    # deepseek-ai/DeepEP#87: DeepEP's own kernels (NVSHMEM in a container), not NCCL's
    ("terminate called after throwing an instance of 'EPException'\n"
     "  what():  Failed: CUDA error /opt/DeepEP/csrc/kernels/runtime.cu:25 'named symbol not found'\n",
     "nccl-arch-missing"),
    # NVIDIA/stdexec#888: an application's kernel built for another GPU of the machine, not NCCL
    ("CUDA error cudaErrorSymbolNotFound [/home/eniebler/Code/stdexec/include/nvexec/stream/bulk.cuh:239]: named "
     "symbol not found\n", "nccl-arch-missing"),
    # round 51's CUDA call NCCL's init finds unsupported (another CUDACHECK failure of the same file family)
    ("node1:1234:1250 [0] init.cc:1730 NCCL WARN Cuda failure 801 'operation not supported'\n", "nccl-arch-missing"),
    # NCCL's own socket connect between nodes with No route to host stays a firewall's (NCCL's socket.cc)
    ("node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned "
     "113(No route to host) errno 115(Operation now in progress)\n", "master-unreachable"),
    # NCCL 2.1x's socket.h wording of the same (huggingface/accelerate#2229)
    ("ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to host\n",
     "master-unreachable"),
    # pdsh's ssh to a node without a route: the launcher's reach, not the store's
    ("pdsh@node1: node3: ssh: connect to host node3 port 22: No route to host\n", "master-unreachable"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_nccl_socket_no_route_is_still_a_firewall():
    assert sig("node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> "
               "returned 113(No route to host) errno 115(Operation now in progress)\n") == "firewall-blocked"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 79's rules (issue 45), from threads of distributed training inside containers and schedulers (a Slurm-on-
Kubernetes job whose head pod's name resolves nowhere, FSDP in containers on two DGX nodes): torch's TCPStore client
failing on a rendezvous host name that does not resolve read as master-unreachable (torch's other wordings of it
already were), and NCCL's bootstrap failing to connect between the ranks, which NCCL 2.18 shows only as its return-code
trace through socket.cc into bootstrap.cc: a second wording of each, in another version's or caller's words than the
corpus case it was written from, and near misses that must not be read as it."""

import re

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import sigwords

NEW = ("nccl-bootstrap-connect",)


@pytest.mark.parametrize("text,expected", [
    # sgl-project/sglang#3820 (NCCL 2.21, NCCL_DEBUG=INFO): a later NCCL first WARNs what connect() returned, then the
    # same trace through socketProgressState and ncclSocketConnect into bootstrap.cc (formerly firewall-blocked, which
    # names a firewall alone; the bootstrap's interface is the other half of the answer)
    ("node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No "
     "route to host) errno 115(Operation now in progress)\n"
     "node5:240:240 [6] NCCL INFO misc/socket.cc:570 -> 2\n"
     "node5:240:240 [6] NCCL INFO misc/socket.cc:621 -> 2\n"
     "node5:240:240 [6] NCCL INFO bootstrap.cc:285 -> 2\n"
     "node5:240:240 [6] NCCL INFO init.cc:1534 -> 2\n", "nccl-bootstrap-connect"),
    # the whole shape a user posts: NCCL 2.18's silent trace (socketPollConnect's ncclSystemError, bootstrap.cc's
    # ncclSocketConnect to the root) under Open MPI's rank prefix, then torch's DistBackendError with NCCL's empty last
    # error (NCCLUtils' words), composed from those formats
    ("[1,4]<stdout>:gpu-b:4105:4372 [0] NCCL INFO misc/socket.cc:567 -> 2\n"
     "[1,4]<stdout>:gpu-b:4105:4372 [0] NCCL INFO misc/socket.cc:618 -> 2\n"
     "[1,4]<stdout>:gpu-b:4105:4372 [0] NCCL INFO bootstrap.cc:270 -> 2\n"
     "[1,4]<stdout>:gpu-b:4105:4372 [0] NCCL INFO init.cc:1350 -> 2\n"
     "[rank4]: Traceback (most recent call last):\n"
     "[rank4]:   File \"/work/train.py\", line 52, in <module>\n"
     "[rank4]:     dist.barrier()\n"
     "[rank4]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
     "1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5\n"
     "[rank4]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
     "[rank4]: Last error:\n", "nccl-bootstrap-connect"),
    # torch 2.x's TCPStore client retrying (TCPStore.cpp's warning, as the corpus's c10d-format-addr logs quote it)
    # with c10d/socket.cpp's getaddrinfo wording as its error, composed from those formats: a pod name that does not
    # resolve (socket.cpp's words alone were already read so; test_store_client_words checks the new wording's own)
    ("[W1104 08:12:44.301877452 TCPStore.cpp:358] [c10d] TCP client failed to connect/validate to host "
     "pytorch-job-master-0:23456 - retrying (try=0, timeout=900000ms, delay=0ms): The IPv4 network addresses of "
     "(pytorch-job-master-0, 23456) cannot be retrieved (gai error: -3 - Temporary failure in name resolution).\n",
     "master-unreachable"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NCCL 2.18's recv in the bootstrap failing (socket.cc's socketProgress: "Connection closed by remote peer", then
    # ncclRemoteError through socketWait and ncclSocketRecv): a peer gone, not a connect; composed from those formats
    ("h1:10:20 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer h2<43211>\n"
     "h1:10:20 [0] NCCL INFO misc/socket.cc:746 -> 6\n"
     "h1:10:20 [0] NCCL INFO misc/socket.cc:758 -> 6\n"
     "h1:10:20 [0] NCCL INFO bootstrap.cc:62 -> 6\n", "nccl-bootstrap-connect"),
    # a failure three socket.cc frames deep (a recv or send chain), its last two frames followed by bootstrap.cc: the
    # first of the two follows another frame, so it is not ncclSocketConnect's
    ("h1:10:20 [0] NCCL INFO misc/socket.cc:47 -> 2\n"
     "h1:10:20 [0] NCCL INFO misc/socket.cc:58 -> 2\n"
     "h1:10:20 [0] NCCL INFO misc/socket.cc:770 -> 2\n"
     "h1:10:20 [0] NCCL INFO bootstrap.cc:44 -> 2\n", "nccl-bootstrap-connect"),
    # horovod/horovod#584 (NCCL 2.3/2.4): the root not listening yet, refused (include/socket.h, bootstrap.cu)
    ("paigcr-b-gpu-1012:4153:4209 [1] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused\n"
     "paigcr-b-gpu-1012:4153:4209 [1] NCCL INFO transport/net_socket.cu:139 -> 2\n"
     "paigcr-b-gpu-1012:4153:4209 [1] NCCL INFO bootstrap.cu:19 -> 2\n"
     "paigcr-b-gpu-1012:4153:4209 [1] NCCL INFO bootstrap.cu:225 -> 2\n", "nccl-bootstrap-connect"),
    # NVIDIA/nccl#879: a proxy connection to a peer rank, after the bootstrap (proxy.cc, transport/net.cc)
    ("resnet-p-worker-0:195626:198757 [0] proxy.cc:808 NCCL WARN Proxy Call to rank 1 failed (Connect)\n"
     "resnet-p-worker-0:195626:198757 [0] NCCL INFO transport/net.cc:319 -> 2\n"
     "resnet-p-worker-0:195626:198757 [0] NCCL INFO transport.cc:137 -> 2\n"
     "resnet-p-worker-0:195626:198757 [0] NCCL INFO init.cc:730 -> 2\n", "nccl-bootstrap-connect"),
    # pytorch/pytorch#137745's TCPStore warning: the same client's words with another error (no address family),
    # not a name that does not resolve
    ("[W1010 23:30:01.169683897 TCPStore.cpp:358] [c10d] TCP client failed to connect/validate to host "
     "33.193.13.94:2222 - retrying (try=2, timeout=900000ms, delay=1307ms): failed to format addr, unknown "
     "family=0\n", "master-unreachable"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_store_client_words():
    """The TCPStore client's line on its own (sigwords.STORE_NAME_UNRESOLVED): with a name that does not resolve as its
    error, and not with another error of the same client."""
    words = re.compile(sigwords.STORE_NAME_UNRESOLVED, re.IGNORECASE)
    assert words.search("[c10d] TCP client failed to connect/validate to host pytorch-job-master-0:23456 - retrying "
                        "(try=0, timeout=900000ms, delay=0ms): The IPv4 network addresses of (pytorch-job-master-0, "
                        "23456) cannot be retrieved (gai error: -3 - Temporary failure in name resolution).")
    assert not words.search("[c10d] TCP client failed to connect/validate to host 33.193.13.94:2222 - retrying (try=2, "
                            "timeout=900000ms, delay=1307ms): failed to format addr, unknown family=0")
    # the name in another line than the client's (a later ssh error): not the client's error
    assert not words.search("[c10d] TCP client failed to connect/validate to host node-0:29500 - retrying (try=1, "
                            "timeout=1800000ms, delay=912ms): Connection reset by peer\n"
                            "ssh: Could not resolve hostname node-1: Name or service not known")


def test_translated_and_final():
    translated_and_final(NEW)

"""Two NCCL releases among one failure's ranks (src/dscluster/mixedversions.py; issue 45, NVIDIA/nccl#1267): the
answer whatever the error then names, when no rank has an error in its own words; one release, a package list or an
environment dump's version, and a rank's own error are not read as it."""

from __future__ import annotations

from explain_rounds import FAILURES_ZH

from dscluster import explain, mixedversions

# torchrun's two nodes, each rank's ProcessGroupNCCL error naming its own NCCL (the shape of a multi-node paste)
_TWO_NODES = (
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, "
    "remote process exited or there was a network error, NCCL version 2.19.3\n"
    "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
    "[rank8]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
    "[rank8]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")


def test_two_releases_are_the_cause():
    found = explain.explain(_TWO_NODES)
    assert found.signature == "version-mismatch" and not found.retry
    assert "2.19.3, 2.18.1" in found.to_dict()["cause"]


def test_the_banner_with_the_family_error():
    text = ("node-a:1:1 [0] NCCL INFO NCCL version 2.20.5+cuda12.4\n"
            "node-b:7:7 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "node-b:7:9 [0] misc/socket.cc:50 NCCL WARN ncclSocketInit: connecting to address with family 0 is "
            "neither AF_INET(2) nor AF_INET6(10)\n")
    assert explain.explain(text).signature == "version-mismatch"


def test_near_misses():
    # one release, named by the banner and by torch's error
    same = ("node-a:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, "
            "NCCL version 2.19.3\n")
    assert explain.explain(same).signature != "version-mismatch"
    # torch's collect_env and pip's list are not a rank's release
    env = ("Versions of relevant libraries:\n[pip3] nvidia-nccl-cu12==2.20.5\nNCCL version: 2.18.1\n"
           "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, "
           "NCCL version 2.19.3\n")
    assert mixedversions.nccl_versions([env]) == ["2.19.3"]
    # a rank's own error in its own words stays the answer
    own = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n"
           "ValueError: tokenizer has no pad token\nnode-a:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
           "node-b:2:2 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
    assert explain.explain(own).signature != "version-mismatch"


def test_the_texts_are_translated():
    assert FAILURES_ZH.get(mixedversions.CAUSE) and FAILURES_ZH.get(mixedversions.FIX)

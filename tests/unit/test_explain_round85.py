"""Round 85's rule (issue 45), from Chinese-language threads about multi-GPU and multi-node training: NCCL's
ncclSystemError ("unhandled system error") in OneFlow's own check of an NCCL call (OF_NCCL_CHECK in
oneflow/core/device/nccl_util.h: `Check failed: <call> : <ncclGetErrorString> (<code>). To see more detail, please run
OneFlow with system variable NCCL_DEBUG=INFO`), read as nccl-system-call like torch's C10D_NCCL_CHECK wording: a second
wording of it, in another caller's or version's words than the corpus case it was written from, and near misses that
must not be read as it."""

import re

import pytest
from explain_rounds import sig

from dscluster import sigwords


@pytest.mark.parametrize("text", [
    # OneFlow's eager NCCL comm manager checks the group's end as well (OF_NCCL_CHECK(ncclGroupEnd()) after the
    # ncclCommInitRank calls of its devices), glog's fatal line and the stack trace it starts
    ("F0301 08:12:40.531203 22110 eager_nccl_comm_manager.cpp:92] Check failed: ncclGroupEnd() : unhandled system "
     "error (2). To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO\n"
     "*** Check failure stack trace: ***\n"
     "    @     0x7f2b1c3e000a  google::LogMessage::Fail()\n"),
    # the version whose macro prints with std::cout, no glog prefix, around the call with the global rank (the comm
    # manager of a later OneFlow: ncclCommInitRank(&device_id2comm.at(device_id), device_set.device_size(),
    # nccl_unique_id, global_rank))
    ("Check failed: ncclCommInitRank(&device_id2comm.at(device_id), device_set.device_size(), nccl_unique_id, "
     "global_rank) : unhandled system error (2). To see more detail, please run OneFlow with system variable "
     "NCCL_DEBUG=INFO\n"),
])
def test_oneflow_nccl_check_system_error(text):
    assert sig(text) == "nccl-system-call"


def test_the_warn_line_before_it_still_names_the_cause():
    # NCCL's shmutils.cc WARN before OneFlow's check: the more specific answer (the shared memory) is kept
    text = ("n1:3412:3501 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-Xa1b2c to 9637892 "
            "bytes\n"
            "F0301 08:12:40.531203 22110 eager_nccl_comm_manager.cpp:75] Check failed: ncclCommInitRank(comm, "
            "device_vec.size(), nccl_unique_id, rank) : unhandled system error (2). To see more detail, please run "
            "OneFlow with system variable NCCL_DEBUG=INFO\n")
    assert sig(text) == "dev-shm-full"


@pytest.mark.parametrize("text", [
    # the same OneFlow check with NCCL's other error strings (ncclGetErrorString of ncclUnhandledCudaError and of
    # ncclRemoteError): not a system call
    ("F0301 08:12:40.531203 22110 eager_nccl_comm_manager.cpp:75] Check failed: ncclCommInitRank(comm, "
     "device_vec.size(), nccl_unique_id, rank) : unhandled cuda error (1). To see more detail, please run OneFlow "
     "with system variable NCCL_DEBUG=INFO\n"),
    ("F0301 08:12:40.531203 22110 eager_nccl_comm_manager.cpp:75] Check failed: ncclCommInitRank(comm, "
     "device_vec.size(), nccl_unique_id, rank) : remote process exited or there was a network error (6). To see more "
     "detail, please run OneFlow with system variable NCCL_DEBUG=INFO\n"),
    # nccl-tests' own check (common.cu's NCCLCHECK: "Test NCCL failure %s:%d '%s'"), quoted in a fastmoe thread: no
    # framework's "Check failed:" of an NCCL call
    "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'\n",
])
def test_near_misses(text):
    assert sig(text) != "nccl-system-call"


def test_the_words_are_oneflows_check_of_an_nccl_call():
    pattern = re.compile(sigwords.NCCL_CHECK_SYSTEM_ERROR)
    # a glog CHECK of something else than an NCCL call, with the same error words
    assert not pattern.search("Check failed: InitComm(dev, nranks) : unhandled system error (2).")
    assert pattern.search("Check failed: ncclCommInitAll(comms, 8, devs) : unhandled system error (2).")

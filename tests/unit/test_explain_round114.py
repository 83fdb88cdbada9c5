"""Round 114's rules (issue 45), from NVIDIA/nccl's own tracker: NCCL missing an attribute of its XML topology (src/graph/
xml.h xmlGetAttrStr: "Attribute %s of node %s not found", from a topology file, NVIDIA/nccl#379), and a rank attaching
to a shared-memory segment of size 0 (the cuMem host descriptor read as a /dev/shm name: NVIDIA/nccl PR 2059, memoryless
NUMA domains), each read where it stands before torch's vague `internal error` or `unhandled system error`: second
wordings in other NCCL versions' and torch's words, and near misses that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nccl-topo-file-attribute", "nccl-cumem-host-numa")

_TORCH_INTERNAL = (
    "[rank0]: Traceback (most recent call last):\n"
    "[rank0]:   File \"/work/train.py\", line 31, in <module>\n"
    "[rank0]:     dist.all_reduce(torch.ones(1, device=\"cuda\"))\n"
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "internal error - please report this issue to the NCCL developers, NCCL version 2.21.5\n"
    "[rank0]: ncclInternalError: Internal check failed.\n")

_TORCH_SYSTEM = (
    "[rank1]: Traceback (most recent call last):\n"
    "[rank1]:   File \"/work/train.py\", line 31, in <module>\n"
    "[rank1]:     dist.all_reduce(torch.ones(1, device=\"cuda\"))\n"
    "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
    "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n")


@pytest.mark.parametrize("text,expected", [
    # a recent NCCL's WARN (graph/xml.h, the host:pid:tid prefix) for a CPU node of a topology file without `vendor`,
    # its NCCLCHECK trace, then torch's DistBackendError: the whole shape a rank prints
    ("ip-10-0-1-7:5120:5188 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/amazon/ofi-nccl/topo.xml\n"
     "ip-10-0-1-7:5120:5188 [0] graph/xml.h:107 NCCL WARN Attribute vendor of node cpu not found\n"
     "ip-10-0-1-7:5120:5188 [0] NCCL INFO graph/topo.cc:742 -> 3\n"
     "ip-10-0-1-7:5120:5188 [0] NCCL INFO init.cc:1034 -> 3\n" + _TORCH_INTERNAL, "nccl-topo-file-attribute"),
    # torch quoting NCCL's last WARN without NCCL_DEBUG (NCCLUtils: "Last error:\n" + ncclGetLastError()), a PCI node of
    # the file without its link width (topo.cc reads link_width of every pci node)
    (_TORCH_INTERNAL + "[rank0]: Last error:\n[rank0]: Attribute link_width of node pci not found\n",
     "nccl-topo-file-attribute"),
    # torch's older RuntimeError, its "Last error:" on the same line block, and NCCL 2.7's words (xml.h:77)
    ("RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, internal error, NCCL version "
     "2.7.8\nncclInternalError: Internal check failed. This is either a bug in NCCL or due to memory corruption\n"
     "Last error:\nAttribute arch of node cpu not found\n", "nccl-topo-file-attribute"),
    # NCCL 2.23's shmutils.cc words (", error: %s (%d)") for the attach of a size-0 segment, its trace, then torch's
    # `unhandled system error`
    ("epyc2:3310:3377 [1] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory\n"
     "epyc2:3310:3377 [1] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
     "/dev/shm/nccl-\u040c (size 0), error: No such file or directory (2)\n"
     "epyc2:3310:3377 [1] NCCL INFO transport/shm.cc:436 -> 2\n" + _TORCH_SYSTEM, "nccl-cumem-host-numa"),
    # later releases print it from src/os/linux.cc (ncclShmOpen moved there), with another garbage name
    ("node7:901:955 [3] os/linux.cc:842 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-%Q "
     "(size 0), error: No such file or directory (2)\n" + _TORCH_SYSTEM, "nccl-cumem-host-numa"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NVIDIA/nccl#326: NCCL 2.6's own topology detection skipping a sysfs value it cannot read (INFO, not a failure)
    ("paidist001:337963:337991 [0] NCCL INFO Topology detection : could not read /sys/devices/pci0000:17/0000:17:00.0/"
     "0000:18:00.0/0000:19:08.0/0000:4f:00.0/max_link_speed, ignoring\n", "nccl-topo-file-attribute"),
    # NCCL's XML reader refusing a topology file of another format version (src/graph/xml.cc): the file is of another
    # NCCL release, not a node short of an attribute
    ("node3:4102:4160 [0] graph/xml.cc:394 NCCL WARN XML Topology has wrong version 2, 1 needed\n"
     "node3:4102:4160 [0] NCCL INFO graph/topo.cc:1780 -> 3\n" + _TORCH_INTERNAL, "nccl-topo-file-attribute"),
    # NVIDIA/nccl#1589 (NCCL 2.24, IB cluster): the attach of a real segment names its creator's size; its cause was not
    # established (downgrading to 2.21.5 made it pass), so it is not read as the size-0 descriptor mix-up
    ("g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory\n\n"
     "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
     "/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)\n", "nccl-cumem-host-numa"),
    # a create that fails (fal-ai-community/video-diffusion-speedrun#2, Docker's 64 MB /dev/shm) is /dev/shm's size
    ("Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n", "nccl-cumem-host-numa"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_failed_create_stays_dev_shm_full():
    # pytorch/torchtitan#853's words (its CI container's 16 MB /dev/shm; --shm-size=1g fixed it)
    assert sig("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
               "NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
               "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
               "Last error:\n"
               "Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)\n") == "dev-shm-full"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

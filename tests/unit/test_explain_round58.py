"""Round 58's rules (issue 45), from PyTorch distributed threads of 2019-2023 (sigparallel.py, signccl.py): the torch
1.1-1.x reducer's assert on a DistributedDataParallel module with no parameter to train (before DDP's constructor said
so in words), and NCCL's topology detection not finding the GPU's PCI device in /sys (WSL2, a container or VM hiding
it): a second wording of each, in another version's or another caller's words than the corpus case it was written
from, the whole shape a user posts (NCCL's WARN, then torch's vague error), and near misses that must not be read as
it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("nccl-sysfs-pci-path",)


@pytest.mark.parametrize("text,expected", [
    # model parallelism with Parameter(...).to(0), which registers no parameter (pytorch/pytorch#41790, torch 1.2)
    ("RuntimeError: tensors.size() > 0 INTERNAL ASSERT FAILED at /pytorch/torch/csrc/distributed/c10d/reducer.cpp:672, "
     "please report a bug to PyTorch.\n", "ddp-no-trainable-params"),
    # NCCL 2.4's include/topo.h (pytorch/pytorch#40273, a one-node job), then torch's vague error of that thread
    ("XXX:430:2237 [0] include/topo.h:27 NCCL WARN Could not find real path of "
     "/sys/class/pci_bus/0000:02/../../0000:02:00.0\nXXX:430:2237 [0] NCCL INFO init.cu:864 -> 2\n"
     "XXX:430:2237 [0] NCCL INFO init.cu:887 -> 2\nXXX:430:2237 [0] NCCL INFO init.cu:911 -> 2\n"
     "XXX:430:2237 [0] NCCL INFO misc/group.cu:69 -> 2 [Async thread]\nTraceback (most recent call last):\n"
     "  File \"distributed_data_parallel.py\", line 55, in <module>\n    output_device=args.local_rank)\n"
     "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error\n",
     "nccl-sysfs-pci-path"),
    # NCCL 2.7.8 under mp.spawn (NVIDIA/nccl#573's first post), two ranks' WARN before the spawn's traceback
    ("xxxxx:2573:2612 [1] graph/xml.cc:332 NCCL WARN Could not find real path of "
     "/sys/class/pci_bus/0000:1e/../../0000:1e:00.0\n\n"
     "xxxxx:2572:2610 [0] graph/xml.cc:332 NCCL WARN Could not find real path of "
     "/sys/class/pci_bus/0000:1e/../../0000:1e:00.0\nTraceback (most recent call last):\n"
     "  File \"main_ddp.py\", line 285, in <module>\n    main()\n", "nccl-sysfs-pci-path"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # other asserts of the same reducer.cpp (pytorch/pytorch#76043, #146907, #31035, and torch 1.1's #18953 comment)
    ("RuntimeError: bucket_count == per_bucket_sizes.size() INTERNAL ASSERT FAILED at "
     "\"../torch/csrc/distributed/c10d/reducer.cpp\":963, please report a bug to PyTorch\n", "ddp-no-trainable-params"),
    ("RuntimeError: expect_sparse_gradient.empty() || (tensors.size() == expect_sparse_gradient.size()) INTERNAL "
     "ASSERT FAILED at \"/pytorch/torch/csrc/distributed/c10d/reducer.cpp\":2134, please report a bug to PyTorch.\n",
     "ddp-no-trainable-params"),
    ("RuntimeError: has_marked_unused_parameters_ INTERNAL ASSERT FAILED at /opt/conda/conda-bld/pytorch_1570910687650"
     "/work/torch/csrc/distributed/c10d/reducer.cpp:290, please report a bug to PyTorch.\n", "ddp-no-trainable-params"),
    ("RuntimeError: next_bucket_ == buckets_.size() ASSERT FAILED at /pytorch/torch/csrc/distributed/c10d/reducer.cpp"
     ":419, please report a bug to PyTorch. Expected all buckets to be ready at the end of the backward pass.\n",
     "ddp-no-trainable-params"),
    # a NIC's sysfs path, in NCCL's net_ib.cc wording (ncclIbGetPciPath), is not the GPU's
    ("node:1:2 [0] NCCL WARN Could not find real path of mlx5_0 (/sys/class/infiniband/mlx5_0/device)\n",
     "nccl-sysfs-pci-path"),
    # libibverbs' own warning about a sysfs entry (horovod/horovod#3333)
    ("[1,0]<stderr>:libibverbs: Warning: couldn't stat '/sys/class/infiniband/mlx5_20'.\n", "nccl-sysfs-pci-path"),
    # RCCL's topology reading a missing sysfs attribute, which it ignores (ROCm/rccl#1728)
    ("node-0:188802:188814 [1] NCCL INFO Topology detection : could not read /sys/devices/LNXSYSTM:00/LNXSYBUS:00/"
     "ACPI0004:00/VMBUS:00/56475055-0003-0000-3130-303237344131/pci0003:00/0003:00:00.0/../max_link_width, "
     "ignoring\n", "nccl-sysfs-pci-path"),
    # NCCL's topology missing a network device by id (round 30's rule)
    ("node:1:2 [0] NCCL WARN Could not find NET with id 2\n", "nccl-sysfs-pci-path"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in explain.SIGNATURES:
        if s.name in NEW:
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

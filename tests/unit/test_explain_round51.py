"""Round 51's rules (issue 45), from the multi-node infrastructure under training (NCCL 2.19-2.29, Slurm, Open MPI
launchers): DeepSpeed's MPI-based launcher backends refusing --num_nodes/--num_gpus or --include/--exclude
(sigdeepspeed.py), a CUDA call NCCL's communicator init finds unsupported and NCCL's topology search finding a link
with no path back (signccl.py), and Open MPI's refusal for too few slots when a paste lost its first letter
(signatures.py): a second wording of each, in another version's or another caller's words than the corpus case it was
written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigdeepspeed import DEEPSPEED_SIGNATURES
from dscluster.signccl import CCL_SIGNATURES

NEW = ("ds-mpi-launcher-limits", "nccl-cuda-op-unsupported", "nccl-topology-path", "nccl-cumem-host")


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed's Intel MPI backend (the case was accelerate's openmpi command line), its traceback
    ("  File \"/root/miniforge3/envs/llm/lib/python3.10/site-packages/deepspeed/launcher/multinode_runner.py\", line "
     "266, in validate_args\n    raise ValueError(f\"{self.name} backend does not support limiting num nodes/gpus\")\n"
     "ValueError: impi backend does not support limiting num nodes/gpus\n", "ds-mpi-launcher-limits"),
    # DeepSpeed 0.3's assert of the OpenMPI runner, the include/exclude half
    ("AssertionError: openmpi backend does not support worker include/exclusion\n", "ds-mpi-launcher-limits"),
    # the Slurm backend's words (multinode_runner.py, SlurmRunner inherits validate_args' message)
    ("ValueError: slurm backend does not support worker include/exclusion\n", "ds-mpi-launcher-limits"),
    # NCCL 2.26 in torch nightlies on a CI fleet (meta-pytorch/torchtune#2556): cudaMemPoolCreate at init.cc:416
    ("[2025-04-04 16:57:39] ip-10-0-9-191:95209:95228 [0] init.cc:416 NCCL WARN Cuda failure 'operation not "
     "supported'\nip-10-0-9-191:95209:95228 [0] NCCL INFO init.cc:1397 -> 1\n", "nccl-cuda-op-unsupported"),
    # a release that prints the CUDA error's number
    ("host1:508:508 [0] init.cc:431 NCCL WARN Cuda failure 801 'operation not supported'\n",
     "nccl-cuda-op-unsupported"),
    # NCCL with driver 535.161.08 (NVIDIA/nccl#1253; the case was NCCL 2.14 on H100)
    ("host:1234:1250 [0] graph/paths.cc:82 NCCL WARN Failed to find reverse path from remNode 0/41000 nlinks 2 to "
     "node 0/61000\n", "nccl-topology-path"),
    # RCCL's hipified copy of the same search, on an Azure VM (ROCm/rccl#1728)
    ("node-0:188802:188813 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/build/hipify/"
     "src/graph/paths.cc:82 NCCL WARN Failed to find reverse path from remNode 0/200000 nlinks 3 to node 0/700000\n",
     "nccl-topology-path"),
    # the SHM transport's cuMem path with another release's line number and CUDA's error name unquoted
    ("gpu-vm:2211:2290 [1] transport/shm.cc:614 NCCL WARN Cuda failure 217 peer access is not supported between "
     "these two devices\n", "nccl-cumem-host"),
    # Open MPI's own first line, whole (the case's paste had lost its T)
    ("There are not enough slots available in the system to satisfy the 16\nslots that were requested by the "
     "application:\n", "mpi-slots"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed's runner refusing --num_gpus together with --include (any launcher): ds-include's
    ("ValueError: Cannot specify num_nodes/gpus with include/exclude\n", "ds-mpi-launcher-limits"),
    # the MPICH backend's other refusal: hosts with different GPU counts, not a selection option
    ("ValueError: MPICH requires same number of devices per node\n", "ds-mpi-launcher-limits"),
    # the NVLS transport's own CUDA refusal stays the NVLS signature's
    ("node1:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 801 'operation not supported'\n",
     "nccl-cuda-op-unsupported"),
    # torch's own CUDA error (its caching allocator, not NCCL's init)
    ("RuntimeError: CUDA error: operation not supported\nCUDA kernel errors might be asynchronously reported at some "
     "other API call\n", "nccl-cuda-op-unsupported"),
    # NCCL on a driver too old for its CUDA calls: another failure
    ("misc/strongstream.cc:53 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'\n",
     "nccl-cuda-op-unsupported"),
    # NCCL's search falling back on a pattern is information, not a failure
    ("host:1:1 [0] NCCL INFO Could not find a path for pattern 4, falling back to simple order\n", "nccl-topology-path"),
    # a network device missing from the topology is nccl-topology-net's
    ("host:1:9 [0] graph/topo.h:218 NCCL WARN Could not find NET with id 1\n", "nccl-topology-path"),
    # the same CUDA error from the P2P transport (its own CUDA IPC path): the generic P2P answer's, not cuMem's
    ("host:12:40 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 217 'peer access is not supported between these two "
     "devices'\n", "nccl-cumem-host"),
    # "somewhere" is no slot count
    ("somewhere are not enough slots available in the system\n", "mpi-slots"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in (*DEEPSPEED_SIGNATURES, *CCL_SIGNATURES):
        if s.name in NEW:
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

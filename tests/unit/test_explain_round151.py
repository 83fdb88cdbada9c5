"""Round 151's rule (issue 45), from DeepSpeed's own threads of multi-node launching: DeepSpeed's MPI discovery
asserting that the ranks it read from MPI agree with an already initialized torch.distributed (DeepSpeed#461, its
Megatron example started with mpirun), read as ds-mpi-world-size-mismatch; second wordings, in another version's or
caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final


def test_translated_and_final():
    translated_and_final(["ds-mpi-world-size-mismatch"])


@pytest.mark.parametrize("text", [
    # the same assertion under PyTorch Lightning's DeepSpeed plugin, which started 2 processes itself while each saw an
    # MPI world of 1 (Lightning-AI/pytorch-lightning#6461's title), in the older engine.py _mpi_check
    ("  File \"/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/engine.py\", line 153, in __init__\n"
     "    self._mpi_check(args, dist_init_required)\n"
     "  File \"/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/engine.py\", line 291, in _mpi_check\n"
     "    world_size)\n"
     "AssertionError: MPI world size 1 does not match torch world size 2\n"),
    # the rank assertion before it (deepspeed/comm/comm.py mpi_discovery: "MPI rank {} does not match torch rank {}"),
    # a rank prefix before it
    ("[rank3]:     assert cdb.get_rank() == rank, \"MPI rank {} does not match torch rank {}\".format(rank, "
     "cdb.get_rank())\n"
     "[rank3]: AssertionError: MPI rank 3 does not match torch rank 11\n"),
])
def test_mpi_discovery_disagrees_with_torch(text):
    assert sig(text) == "ds-mpi-world-size-mismatch"


@pytest.mark.parametrize("text", [
    # DeepSpeed's own INFO line of the same discovery: no failure
    ("[2024-05-14 10:02:11,921] [INFO] [comm.py:702:mpi_discovery] Discovered MPI settings of world_rank=0, "
     "local_rank=0, world_size=16, master_addr=10.0.0.11, master_port=29500\n"),
    # ZeRO's refusal to load optimizer partitions of another data-parallel size (runtime/engine.py
    # _load_zero_checkpoint): a world size that does not match, of a checkpoint
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP world size of 8 but "
     "the current world size is 16. Automatic adjustment of ZeRO's optimizer state partitioning with a new world "
     "size is not currently supported.\n"),
    # DeepSpeed's compiled tensor-parallel collectives (deepspeed/compile/custom_ops/tp_collectives.py)
    "ValueError: partition_sizes=[1024, 1024, 1024] does not match TP world size 4\n",
    # the assertion's source line alone, its placeholders unfilled (a traceback cut before the error)
    ("    assert cdb.get_world_size() == world_size, \"MPI world size {} does not match torch world size {}\""
     ".format(\n"),
])
def test_near_misses_are_not_ds_mpi_world_size_mismatch(text):
    assert sig(text) != "ds-mpi-world-size-mismatch"

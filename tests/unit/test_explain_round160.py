"""Round 160's rules (issue 45, live: torch.distributed mistakes in a user's own script run under dscluster launch
--local 2 on gloo): gloo's pair refusing a message larger than its own collective's buffer (`op.preamble.length <=
op.nbytes. A vs B`, newer gloo adding "Received data size doesn't match expected size. Is there a distributed
collective mismatch in your code?") and dscluster's own hang detection seeing two ranks in different operations at one
collective, both read as collective-mismatch; torch's "trying to initialize the default process group twice" as
pg-initialized-twice; all_gather's output list of another length than the group's size (gloo's "invalid output tensor
list at index", NCCL's "must match number of collective participants") as all-gather-list-length. Second wordings
(other versions' and callers' words than the live logs) and near misses, other components' text with like words that
must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("pg-initialized-twice", "all-gather-list-length")


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW)
    assert not by_name["collective-mismatch"].retry


@pytest.mark.parametrize("text", [
    # an older gloo (pair.cc:446), without the added sentence, the C++ exception ending the process
    ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
     "  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= "
     "op.nbytes. 3096 vs 16\n"),
    # the same enforcement reported by Ray's worker as an unhandled exception
    ("Unhandled exception: N4gloo13EnforceNotMetE. what(): [enforce fail at ../third_party/gloo/gloo/transport/tcp/"
     "pair.cc:446] op.preamble.length <= op.nbytes. 1716224 vs 128\n"),
    # dscluster's hang detection (runs/supervising/hang.py) on another group and other operations
    ("[launcher] [dscluster 11:02:41] failure detected: rank 0 waits in broadcast and rank 3 in all_gather, the same "
     "collective (#57 of group 2) called differently: they can never meet\n"),
])
def test_collective_mismatch(text):
    assert sig(text) == "collective-mismatch"


@pytest.mark.parametrize("text", [
    # gloo's peer gone (another rank's abort), on its own: not which mismatch
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
     "[10.0.0.2]:24943\n"),
    # gloo's device given an interface this node lacks: another enforcement of gloo's
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to "
     "find address for: eth0\n"),
    # dscluster's hang detection's other form: a rank idle outside any collective
    ("[launcher] [dscluster 11:02:41] failure detected: rank 1 did nothing for 312.0s (no CPU, no I/O) outside any "
     "collective while rank 0 waited 311.5s in all_reduce (#8 of group 0)\n"),
])
def test_near_misses_are_not_collective_mismatch(text):
    assert sig(text) != "collective-mismatch"


@pytest.mark.parametrize("text", [
    # torch 1.x raised a RuntimeError (mmcv's init_dist called after the script's own init)
    ('  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 434, in '
     "init_process_group\n"
     '    raise RuntimeError("trying to initialize the default process group "\n'
     "RuntimeError: trying to initialize the default process group twice!\n"),
])
def test_pg_initialized_twice(text):
    assert sig(text) == "pg-initialized-twice"


@pytest.mark.parametrize("text", [
    "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n",
    # DeepSpeed's init_distributed when the group exists: an INFO line, no failure
    "[2026-03-11 09:02:44,118] [INFO] [comm.py:902:init_distributed] Distributed backend already initialized\n",
    # accelerate's state, another "already initialized"
    ("ValueError: AcceleratorState has already been initialized and cannot be changed, restart your runtime completely "
     "and pass `mixed_precision='bf16'` to `Accelerator()`.\n"),
])
def test_near_misses_are_not_pg_initialized_twice(text):
    assert sig(text) != "pg-initialized-twice"


@pytest.mark.parametrize("text", [
    # ProcessGroupNCCL's flatten_for_scatter_gather, torch 2.x (a ValueError with the counts)
    ("ValueError: Tensor list input to scatter/gather must match number of collective participants but got 1 inputs "
     "with world_size 8 and 1 devices.\n"),
    # the same check in torch 1.x, a RuntimeError without the counts
    "RuntimeError: Tensor list input to scatter/gather must match number of collective participants\n",
])
def test_all_gather_list_length(text):
    assert sig(text) == "all-gather-list-length"


@pytest.mark.parametrize("text", [
    # gloo's check of the list's tensors (c10d/Utils.hpp assertSizesMatch): one tensor of another shape
    "RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected [8, 32], got [4, 32])\n",
    # several devices' lists of different lengths
    "RuntimeError: ProcessGroupGloo::allgather: requires input/output tensor lists to have the same length\n",
])
def test_near_misses_are_not_all_gather_list_length(text):
    assert sig(text) != "all-gather-list-length"

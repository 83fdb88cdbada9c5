"""Round 144's rules (issue 45), from threads of multi-node training that failed at start-up or in its first
collectives: Megatron's start-up asserting that the launcher's local rank is rank % device_count (nodes with different
GPU counts, DeepSpeed#3408), and oneCCL's transport layer failing a transfer inside a collective (`EXCEPTION:
atl_comm->wait(...) fails with status`, a Slingshot system's missing FI_CXI_* tuning, saforem2/ezpz#214). Each: a
second wording (another caller's or version's words of the same message than the corpus case it was written from) and
near misses, other components' text with like words that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("megatron-local-rank-mismatch", "oneccl-fabric-transport")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # GPT-NeoX's copy of the check (megatron/initialize.py _initialize_distributed, black-formatted), another caller
    ('  File "/gpt-neox/train.py", line 31, in main\n'
     "    pretrain(neox_args=neox_args)\n"
     '  File "/gpt-neox/megatron/training.py", line 242, in pretrain\n'
     "    initialize_megatron(neox_args=neox_args)\n"
     '  File "/gpt-neox/megatron/initialize.py", line 75, in initialize_megatron\n'
     "    finish_mpu_init()\n"
     '  File "/gpt-neox/megatron/initialize.py", line 49, in finish_mpu_init\n'
     "    _initialize_distributed(neox_args=neox_args)\n"
     '  File "/gpt-neox/megatron/initialize.py", line 145, in _initialize_distributed\n'
     "    neox_args.local_rank == device\n"
     'AssertionError: expected local-rank to be the same as rank % device-count.\n'),
    # Megatron-LM before b57429e17 (megatron/training/initialize.py), under torchrun's rank prefix, one GPU per task
    ("[rank1]:   File \"/workspace/Megatron-LM/megatron/training/initialize.py\", line 238, in _initialize_distributed\n"
     "[rank1]:     assert (\n"
     "[rank1]: AssertionError: expected local-rank to be the same as rank % device-count.\n"),
])
def test_megatron_local_rank_not_rank_modulo_device_count(text):
    assert sig(text) == "megatron-local-rank-mismatch"


@pytest.mark.parametrize("text", [
    # DeepSpeed's engine (deepspeed/runtime/engine.py _do_args_sanity_check): --local_rank against env LOCAL_RANK
    ("AssertionError: Mismatch in local rank setting, args.local_rank=1 but env['LOCAL_RANK']=0.\n"),
    # nanotron's ParallelContext (src/nanotron/parallel/context.py): LOCAL_RANK against its local process group
    ('  File "/nanotron/src/nanotron/parallel/context.py", line 73, in __init__\n'
     '    assert int(os.environ.get("LOCAL_RANK")) == dist.get_rank(self.local_pg), "Local rank mismatch"\n'
     "AssertionError: Local rank mismatch\n"),
])
def test_other_local_rank_checks_are_not_megatrons(text):
    assert sig(text) != "megatron-local-rank-mismatch"


@pytest.mark.parametrize("text", [
    # oneCCL 2021.13+'s ATL_CALL_THROW_IF_ERROR as written (a newline before "fails"), the send side of a
    # reduce-scatter ring (reduce_scatter_ring.hpp), raised through torch's xccl backend
    ("RuntimeError: oneCCL: reduce_scatter_ring.hpp:205 reduce_scatter_ring_blocking: EXCEPTION: "
     "atl_comm->wait(ep_idx, send_req)\n fails with status: 1\n"),
    # a scale-out allreduce's wait (allreduce_scaleout_sycl.cpp), logged by CCL_THROW under CCL_ABORT_ON_THROW=1
    # (LOG_ERROR of the same message before abort()), with oneCCL's own log prefix
    ("2026:08:11-10:02:17:(123456) |CCL_ERROR| allreduce_scaleout_sycl.cpp:92 operator(): EXCEPTION: "
     "atl_comm->wait(ep_idx, req)\n fails with status: 1\n"),
])
def test_a_oneccl_transport_failure_in_a_collective(text):
    assert sig(text) == "oneccl-fabric-transport"


@pytest.mark.parametrize("text", [
    # oneCCL's provider lookup at set-up (atl_ofi_helper.cpp, LOG_ERROR, not thrown from a collective's transfer)
    ("2026:08:11-10:02:17:(123456) |CCL_ERROR| atl_ofi_helper.cpp:1241 atl_ofi_open_nw_provs: "
     "atl_ofi_get_prov_list(ctx, prov_name, base_hints, &prov_list)\n fails with status: 1\n"),
    # oneCCL's OFI memory registration (atl_ofi.cpp atl_ofi::mr_cache::get, CCL_THROW "failed to register mr, ret: ")
    ("RuntimeError: oneCCL: atl_ofi.cpp:1175 get: EXCEPTION: failed to register mr, ret: -12\n"),
])
def test_other_oneccl_errors_are_not_a_collectives_transfer(text):
    assert sig(text) != "oneccl-fabric-transport"

"""Round 50's rules (issue 45), from PyTorch distributed of torch 2.4-2.10 (sigparallel.py): an operator DTensor has
no sharding rule for, a DeviceMesh sliced by dimension names it does not accept, a 2-D DeviceMesh asked for its group
without a dimension, FSDP2's 2-D state_dict refused by torch 2.4, DDP's static graph meeting a graph that changes, and
torch 2.5's c10d address-formatting bug: a second wording of each, in another version's or another caller's words than
the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigparallel import PARALLEL_SIGNATURES

NEW = ("dtensor-op-unsupported", "device-mesh-dim-name", "device-mesh-group-dim", "fsdp2-2d-state-dict",
       "ddp-static-graph", "c10d-format-addr")


@pytest.mark.parametrize("text,expected", [
    # DTensor's dispatch under Ray Train (pytorch/pytorch#147724), another op than the case's aten.view.dtype
    ("ray.exceptions.RayTaskError(NotImplementedError): ray::_RayTrainWorker__execute.get_next()\n"
     "NotImplementedError: Operator aten.select.int does not have a sharding strategy registered.\n",
     "dtensor-op-unsupported"),
    # a custom op's name (torchtitan's deterministic_topk, pytorch/torchtitan#3645)
    ("Operator torchtitan.deterministic_topk.default does not have a sharding strategy registered.\n",
     "dtensor-op-unsupported"),
    # DTensor's decomposition path (torch/distributed/tensor/_sharding_prop.py), its own sentence
    ("NotImplementedError: Generating sharding strategy via decomposition failed because aten.embedding_renorm_.default"
     " does not have a sharding strategy registered.\n", "dtensor-op-unsupported"),
    # torch 2.3/2.4's wording of the slice refusal (device_mesh.py, DeviceMesh.__getitem__)
    ("KeyError: \"Invalid mesh_dim_name ('PP',) specified. Valid mesh_dim_names should be a contiguous subsequence of "
     "('DP', 'TP').\"\n", "device-mesh-dim-name"),
    # a dimension renamed by torchtitan (dp_shard_cp to fsdp), the key error printed without its quotes
    ("#   KeyError: Invalid mesh_dim_names ('dp_shard_cp',) specified.\n"
     "#             Valid mesh_dim_names are ['world', 'loss_mesh']\n", "device-mesh-dim-name"),
    # the order check of _get_slice_mesh_dims, a tuple of strings (pytorch/pytorch#157096)
    ("KeyError: (\"Invalid mesh_dim_names ('dp_shard', 'dp_shard') specified. \", 'Found mesh dim indices to slice: "
     "[(1,), (1,)]. ', 'Mesh dim indices should be in ascending order.')\n", "device-mesh-dim-name"),
    # get_local_rank's wording (no get_all_groups hint), a 2-D mesh
    ("RuntimeError: ('Found the DeviceMesh have 2 dimensions', 'Optional kwarg `mesh_dim` needs to be specified when "
     "device_mesh.ndim > 1.')\n", "device-mesh-group-dim"),
    # later releases' one sentence, a 3-D mesh
    ("RuntimeError: Found the DeviceMesh have 3 dimensions. Optional kwarg `mesh_dim` needs to be specified when "
     "device_mesh.ndim > 1.\n", "device-mesh-group-dim"),
    # the refusal as a rank prints it under torchrun (the case had the bare traceback)
    ("[rank4]: NotImplementedError: 2D state_dict is under development. Please check "
     "https://github.com/pytorch/pytorch/issues/129627 for more details.\n", "fsdp2-2d-state-dict"),
    # the reducer's other static-graph check (reducer.cpp, a new iteration before the prior reduction finished)
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
     "indicates that your training graph has changed in this iteration, e.g., one parameter is used in first "
     "iteration, but then got unused in the second iteration. this is not compatible with static_graph set to True. "
     "Parameters which did not receive grad for rank 0: net.lin4.model.1.weight\n", "ddp-static-graph"),
    # the formatter's DistNetworkError reaching Python, not inside TCPStore's retry warning
    ("torch.distributed.DistNetworkError: failed to format addr, unknown family=0\n", "c10d-format-addr"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # mixing plain tensors and DTensors (FSDP2 + TP, pytorch/pytorch#124019) is not an op without a rule
    ("RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
     "before calling distributed operators!\n", "dtensor-op-unsupported"),
    # FSDP1's sharding strategy falling back on one rank is a warning, not DTensor's refusal
    ("UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.HYBRID_SHARD since the world size "
     "is 1.\n", "dtensor-op-unsupported"),
    # slicing a mesh built without names is another refusal (device_mesh.py)
    ("RuntimeError: Cannot slice a DeviceMesh without mesh_dim_names!\n", "device-mesh-dim-name"),
    # init_device_mesh's own check of the names' count
    ("RuntimeError: ('Please provide a mesh_dim_name to each mesh_dim!', 'Found 1 instead of 2.')\n",
     "device-mesh-dim-name"),
    # a mesh bigger than the world (pytorch/pytorch#111452) is not a missing mesh_dim
    ("RuntimeError: Mesh should not be bigger than default world size, but found 9 ranks!\n", "device-mesh-group-dim"),
    ("RuntimeError: DeviceMesh process groups not initialized!\n", "device-mesh-group-dim"),
    # DCP's missing key is the checkpoint's contents, not the 2-D refusal
    ("RuntimeError: Missing key in checkpoint state_dict: model.2.weight.\n", "fsdp2-2d-state-dict"),
    ("FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, "
     "get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP.\n",
     "fsdp2-2d-state-dict"),
    # the reducer's check without static_graph (unused parameters) and its twice-ready check
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
     "indicates that your module has parameters that were not used in producing loss. You can enable unused "
     "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
     "`torch.nn.parallel.DistributedDataParallel`\n", "ddp-static-graph"),
    ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
     "reasons: 1) Use of a module parameter outside the `forward` function.\n", "ddp-static-graph"),
    # an IPv6 socket the kernel does not offer (pytorch/pytorch#128998) is not the formatter's bug
    ("[W socket.cpp:436] [c10d] The server socket cannot be initialized on [::]:22010 (errno: 97 - Address family not "
     "supported by protocol).\n", "c10d-format-addr"),
    ("get_addr client.c:223 getaddrinfo: Address family for hostname not supported\n", "c10d-format-addr"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in PARALLEL_SIGNATURES:
        if s.name in NEW:
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name

"""Failure signatures of gloo's own transport device, split from sigtorch.py's table (which splices them in this place,
so the order of the whole table is unchanged): its device factory given neither an interface nor a host name (round
104) and a host name that resolves to no address of this machine (round 141); and (round 160) what its pairs say when
the ranks' collectives do not match; round 182: a rank not below the world size (gloo's context.cc) and a backend name
torch.distributed does not know (distributed_c10d.py); round 193: hand-written tensor and pipeline parallelism over
subgroups (a send to a peer no process is, a list of ranks as group=, a group's size of -1 off its members, all_gather's
output of another size). Each pattern is the wording of the component that prints it
(torch/csrc/distributed/c10d/GlooDeviceFactory.cpp, gloo's transport/tcp/device.cc), never one log's. The real logs
they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import _PICKLE_REFUSED

# gloo's transport/tcp/unbound_buffer.cc (UnboundBuffer::waitRecv / waitSend): a rank's own wait for its peers ran past
# the process group's timeout, "Timed out waiting Nms for recv operation to complete" (or send), whatever call waited.
_GLOO_WAIT = r"Timed out waiting \d+ms for (?:recv|send) operation"
# The call a rank waited in, from its traceback: the innermost torch.distributed function (distributed_c10d.py's
# barrier, all_reduce, broadcast, recv...), else autograd's engine (DDP's reducer runs the gradient all_reduce from C++
# inside loss.backward(), with no Python frame of torch.distributed), else the innermost DeepSpeed frame (ZeRO-3's
# partition_parameters.py waits on the handles of asynchronous all-gathers it issued: _allgather_params_coalesced).
_C10D_FRAME = re.compile(r"distributed_c10d\.py\", line \d+, in (\w+)")
_BACKWARD_FRAME = re.compile(r"autograd[/\\]graph\.py\", line \d+, in _engine_run_backward")
_DS_FRAME = re.compile(r"[/\\]deepspeed[/\\](?:\w+[/\\]){0,4}\w+\.py\", line \d+, in (\w+)")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_WAIT = re.compile(_GLOO_WAIT, re.IGNORECASE)


def _timed_out_in(text: str) -> str | None:
    """The call whose gloo timeout ends the last traceback of one rank's text that ends so (None: none, or a call the
    traceback does not name)."""
    call = deepspeed = found = None
    for line in text.splitlines():
        if _TRACEBACK.search(line):
            call = deepspeed = None
        elif (m := _C10D_FRAME.search(line)) is not None:
            call = m.group(1)
        elif call is None and _BACKWARD_FRAME.search(line):
            call = "backward"
        elif (m := _DS_FRAME.search(line)) is not None:
            deepspeed = m.group(1)
        elif _WAIT.search(line):
            found, call, deepspeed = call or deepspeed or found, None, None
    return found


def _same_call_everywhere(_m: re.Match, texts: Iterable[str]) -> bool:
    """collective-mismatch's aside_if for ranks' own timeouts: set aside unless two ranks timed out in different
    calls (one in barrier, another in all_reduce or in backward's DDP all_reduce)."""
    calls = {c for c in map(_timed_out_in, texts) if c is not None}
    return len(calls) < 2


GLOO_SIGNATURES: tuple[Signature, ...] = (
    # Round 193 (live): hand-written tensor and pipeline parallelism over process subgroups. A send or recv to a peer
    # that is not in the process group: gloo connects a pair lazily, on its first send/recv, by waiting in the store
    # for the peer's address (ProcessGroupGloo's key ".../<peer rank>"), and a dst/src no process has never publishes
    # it: the rank's own traceback ends in distributed_c10d.py's isend/irecv (send/recv) with the store's
    # "DistStoreError: wait timeout after Nms, keys: ...". Not a peer's matching call that never came (p2p-recv-timeout:
    # gloo's unbound_buffer.cc wait, the pair already made).
    _sig("p2p-dst-not-in-world", r"distributed_c10d\.py\", line \d+, in (?:isend|irecv|send|recv)\n(?:[^\n]*\n){0,3}?"
         r"[^\n]*?(?P<ev>DistStoreError: wait timeout after \d+ms, keys: [^\n]{0,120})",
         "A point-to-point send or recv named a peer that no process of the group is: gloo connects to a peer on "
         "the first send or recv to it by waiting in the store for that rank's address (the key ends with the "
         "peer's rank), and it never came. The dst/src is not a rank of the process group: rank + 1 on the last "
         "pipeline stage (or rank - 1 on the first), a rank not below the world size, a recipe's rank numbers for "
         "more processes than this run has.",
         "Give send/recv a dst/src between 0 and world_size - 1 of its group, and guard the pipeline's ends: the last "
         "stage sends nothing forward and the first receives nothing (if rank + 1 < world_size). Over a subgroup, "
         "pass the peer's global rank as dst/src (or group_dst/group_src in the group's own numbering). A restart "
         "fails the same way.", retry=False),
    # A Python list (or tuple, range) of ranks passed as group= to a torch.distributed call: torch looks the group up
    # in its dicts of process groups (distributed_c10d.py's get_backend, all_reduce's pg_coalesce_state...), and
    # CPython's "TypeError: unhashable type: 'list'" is raised in that frame. Only right under a distributed_c10d.py
    # frame: the same words from a user's dict or set are another mistake.
    _sig("group-not-process-group", r"distributed_c10d\.py\", line \d+, in \w+\n(?:[^\n]*\n){0,2}?[^\n]*?"
         r"(?P<ev>TypeError: unhashable type: '(?:list|tuple|range|set)')",
         "A torch.distributed call was given a list of ranks as group=, not a process group: group= takes the "
         "ProcessGroup object that dist.new_group(ranks) returns (or a DeviceMesh's get_group()), and torch cannot "
         "look a list up among its groups.",
         "Keep what dist.new_group(ranks) returns (every rank calls it, for every group, in the same order) and pass "
         "that object as group= to the collective or send/recv. A restart fails the same way.", retry=False),
    # dist.get_world_size(group) (and get_rank(group)) return -1 on a rank that is not a member of group
    # (distributed_c10d.py: _rank_not_in_group). A world size of -1 used as a number of shards reaches ATen's
    # chunk: "chunk expects `chunks` to be greater than 0, got: -1".
    _sig("group-size-not-member", r"(?P<ev>chunk expects `chunks` to be greater than 0, got: -1)\b",
         "torch.chunk was asked for -1 pieces: a tensor split over a process group's size, and "
         "dist.get_world_size(group) (like dist.get_rank(group)) returns -1 on a rank that is not a member of that "
         "group. The rank kept a group it is not in: the last group made in a loop over all groups, or another "
         "block's tensor-parallel group.",
         "On each rank keep the group that holds it: every rank calls dist.new_group for every group in the same "
         "order, and keeps the one whose ranks contain dist.get_rank() (or use init_device_mesh and "
         "mesh.get_group(dim)). Check dist.get_world_size(group) > 0 before splitting by it. A restart fails the "
         "same way.", retry=False),
    # ProcessGroupGloo.cpp's allgather checks every output tensor against this rank's input: "ProcessGroupGloo::
    # allgather: invalid tensor size at index N (expected (input's sizes), got (output's))"; all_gather_into_tensor
    # on gloo splits its output into world_size chunks along dim 0 and meets the same check.
    _sig("all-gather-output-size", r"(?P<ev>ProcessGroupGloo::allgather\w*: invalid tensor size at index \d+ "
         r"\(expected \([\d, ]*\), got \([\d, ]*\)\))",
         "all_gather's output does not have the size its input needs: each tensor of all_gather's output list must "
         "have this rank's input shape (the 'expected' in the message), and all_gather_into_tensor's output must be "
         "world_size times the input along the first dimension. A buffer made with the full tensor's shape for "
         "every rank, or world_size times a size that is already the full one, gives another ('got').",
         "Allocate the output from the input: [torch.empty_like(shard) for _ in range(world_size)] for all_gather, "
         "torch.empty(world_size * shard.shape[0], *shard.shape[1:]) for all_gather_into_tensor (the full tensor's "
         "shape when the shards are equal parts of it). Shards of different sizes need padding to one size first. A "
         "restart fails the same way.", retry=False),
    # Round 104: torch/csrc/distributed/c10d/GlooDeviceFactory.cpp's makeTCPDevice (Linux), makeTCPTLSDevice and
    # makeUVDevice (Windows, macOS) refuse to make gloo's transport device when both the interface name and the host
    # name they are given are empty: "GlooDeviceFactory::make{TCP,TCPTLS,UV}Device(): interface or hostname can't be
    # empty". ProcessGroupGloo passes the machine's own host name when GLOO_SOCKET_IFNAME names no interface, so an
    # empty host name (a Windows PC whose computer name is blank: Applio#137, the c10d client's "[]:PORT" before it)
    # ends there. Not the factory's other refusals ("makeDeviceForHostname(): unsupported gloo device", "UV transport
    # does not support lazy init"), nor the TCPStore's failed connections alone.
    _sig("gloo-hostname-empty", r"GlooDeviceFactory::make(?:TCP|TCPTLS|UV)Device\(\): interface or hostname can't be "
         r"empty",
         "gloo could not make its network device: it was given neither a network interface nor a host name. Without "
         "GLOO_SOCKET_IFNAME torch hands gloo the machine's own host name, and this machine's name is empty (seen on "
         "Windows PCs whose computer name is blank).",
         "Give the machine a host name (Windows: Rename-Computer in PowerShell, then reboot; Linux: hostnamectl "
         "set-hostname NAME) and check that `hostname` prints it, or name the interface gloo should use with "
         "GLOO_SOCKET_IFNAME on every rank. A restart fails the same way.", retry=False),
    # Round 141: gloo's transport/tcp/device.cc lookupAddrForHostname, which gloo runs when torch hands it the
    # machine's own host name (GLOO_SOCKET_IFNAME unset): it binds a socket to each address getaddrinfo gives for the
    # name and fails when none is usable here: `rp != nullptr. Unable to find address for: HOST` (before gloo#191, July
    # 2019), `bind_rv == 0. Unable to find address for HOST; bind(2) for [ADDR]:0 failed with: MSG` since (pipedream#32:
    # the name resolved to no address of the container's machine; naming the interface fixed it). Not
    # lookupAddrForIface's `ifa != nullptr. Unable to find address for: IFACE` (GLOO_SOCKET_IFNAME naming no interface
    # of this node: nccl-no-interface), nor a name that does not resolve at all (getaddrinfo's `rv == 0`).
    _sig("gloo-host-name-not-local", r"\brp != nullptr\. Unable to find address for: \S|"
         r"\bUnable to find address for [^\s;]+; bind\(2\) for \S+ failed with: ",
         "gloo was given no network interface (GLOO_SOCKET_IFNAME unset), so it looked up the machine's own host name "
         "and tried to bind to each address that name resolves to; none of them is usable on this machine: the name "
         "resolves (in /etc/hosts or DNS) to another or an old address, to the host's address inside a container "
         "with its own network, or only to IPv6 where IPv6 is off.",
         "Set GLOO_SOCKET_IFNAME to the interface that carries this node's training-network address (ip -br addr) "
         "on every node, or make `hostname` resolve to an address of this machine (an /etc/hosts line with its "
         "training-network IP). A restart fails the same way.", retry=False),
    # Round 160: gloo's transport/tcp/pair.cc, Pair's read of a message into the buffer of the operation this rank
    # posted: GLOO_ENFORCE_LE(op.preamble.length, op.nbytes), printed "[enforce fail at .../gloo/transport/tcp/
    # pair.cc:N] op.preamble.length <= op.nbytes. SENT vs EXPECTED" (a gloo::EnforceNotMet that terminates the
    # process); newer gloo (the one in torch 2.13's libtorch_cpu) adds "Received data size doesn't match expected size. Is
    # there a distributed collective mismatch in your code?". A peer sent more bytes than this
    # rank's collective expects: the ranks are in collectives of other sizes (another shape or dtype on one rank, or
    # one rank in another collective after skipping one; public code notes name uneven validation loaders, a broadcast of parameter
    # lists that differ by rank, async checkpoint collectives racing the training loop's). Not the peers' "Read error
    # ... Connection reset by peer" after the abort (gloo-peer-closed), nor pair.cc's other enforcements
    # (`op.nwritten == op.preamble.nbytes`, `op.preamble.roffset + op.preamble.length <= op.buf->size_`).
    # Round 189 (live): the same mismatch where DDP's constructor made the collectives: torch/nn/parallel/
    # distributed.py __init__ checks the parameters' shapes (distributed/utils.py _verify_param_shape_across_processes,
    # ATen's "DDP expects same model across all ranks, but Rank N has M params, while rank 0 has K ...") and broadcasts
    # rank 0's (_sync_module_states -> _sync_params_and_buffers); a rank whose model has other parameters sends or
    # expects another number of bytes. Only where a stream of the failure shows DDP's constructor there (_BUILDING_DDP).
    _sig("ddp-model-differs-by-rank", r"\bDDP expects same model across all ranks|"
         r"\bop\.preamble\.length <= op\.nbytes\. \d+ vs \d+|Received data size doesn't match expected size\. Is there "
         r"a distributed collective mismatch",
         "The ranks gave DistributedDataParallel models with different parameters: when DDP is built it checks the "
         "parameters' shapes across ranks and broadcasts rank 0's, and one rank's model has other or more parameters "
         "than another's. Code that changes the model ran on some ranks only (adapters injected, layers frozen, "
         "replaced or resized inside `if rank == 0:` next to the printing of the parameter count), or the ranks built "
         "it from different configs or checkpoints.",
         "Build the same model on every rank before wrapping it: move every change to the model (adding LoRA or other "
         "adapters, freezing, resizing embeddings, loading weights) out of rank-only branches, leave only printing "
         "and saving under `if rank == 0:`, and give every rank the same config (print sum(p.numel() for p in "
         "model.parameters()) on each rank to compare). A restart fails the same way.", retry=False,
         aside_if=lambda m, texts: not m.group(0).startswith("DDP") and not _building_ddp(texts)),
    _sig("collective-mismatch", r"\bop\.preamble\.length <= op\.nbytes\. \d+ vs \d+|Received data size doesn't match "
         r"expected size\. Is there a distributed collective mismatch",
         "A gloo collective received more data from a peer than this rank's own call expects: the ranks called "
         "collectives that do not match. The tensors differ between ranks in shape or dtype (a per-rank batch or "
         "metric of another length, a float on one rank and an integer on another, parameter lists that differ by "
         "rank; broadcast_object_list's object_list of another length on one rank than on src, whose list of "
         "object sizes is such a tensor), or one rank skipped a collective (one inside `if rank == 0:`, an uneven "
         "number of batches) and met its peers' next one.",
         "Make every rank call the same collectives in the same order with tensors of one shape and dtype: pad or "
         "trim per-rank tensors to one length (or all_gather their lengths first, or use all_gather_object), cast "
         "to one dtype, give broadcast_object_list a list of the same length on every rank ([None] * len(objects) "
         "off src), keep collectives out of rank-only branches, and give every rank the same number of steps "
         "(DistributedSampler, drop_last). TORCH_DISTRIBUTED_DEBUG=DETAIL checks the calls and names the one that "
         "differs. A restart fails the same way.", retry=False),
    # Round 181 (live): a blocking point-to-point call that timed out waiting for its peer's matching one: the
    # traceback's innermost torch.distributed frame is distributed_c10d.py's recv or send (work.wait() of the p2p
    # work) and the error gloo's unbound_buffer.cc "Timed out waiting Nms for recv operation" (or send) or NCCL's
    # watchdog; or NCCL's watchdog line naming the work, ProcessGroupNCCL.cpp's "WorkNCCL(SeqNum=N, OpType=RECV, ...)
    # ran for N milliseconds before timing out" (SEND likewise). Not a collective's timeout (barrier, all_reduce: their
    # own frames, OpType=ALLREDUCE...), nor a p2p call whose peer is gone ("Connection closed by peer").
    _sig("p2p-recv-timeout", r"distributed_c10d\.py\", line \d+, in (?:recv|send)\n(?:(?!Traceback \(most recent call "
         r"last\))[^\n]*\n){0,12}?[^\n]*?(?:" + _GLOO_WAIT + r"|Watchdog caught collective operation timeout)|"
         r"\bWorkNCCL\((?:SeqNum=\d+, )?OpType=(?:RECV|SEND)\b[^\n]*?\) ran for \d+ (?:milliseconds|ms) before timing out",
         "A point-to-point recv or send (torch.distributed.recv/send, a pipeline stage's transfer) waited past the "
         "process group's timeout for the peer's matching call, which never came. Every rank calling its blocking "
         "recv before its send (a ring or neighbour exchange written by hand) deadlocks: each waits for a message no "
         "rank has sent yet. Otherwise the src/dst (or tag) does not match the peer's call, the peer took another "
         "path, or it had nothing to send for longer than the timeout.",
         "Pair each blocking call with the peer's opposite one: order them by rank (even ranks send first, odd ranks "
         "receive first), or post both without blocking (torch.distributed.batch_isend_irecv with P2POp(isend) and "
         "P2POp(irecv), or isend/irecv, then wait() on both); check that src, dst and tag match the peer's call. A "
         "restart fails the same way.", retry=False),
    # Round 181 (live): two ranks whose own gloo timeouts (unbound_buffer.cc's "Timed out waiting Nms for recv
    # operation", torch 1.x-2.x) were raised inside different calls: one rank's traceback ends in
    # distributed_c10d.py's barrier, another's in all_reduce, broadcast... or in loss.backward() (DDP's gradient
    # all_reduce, run by its C++ reducer from autograd's engine). They waited in collectives that are not the same one,
    # so neither could complete: a collective on some ranks only (a condition on one rank's own loss, a barrier in a
    # main-process branch) or uneven numbers of steps. Only where two ranks name different calls (_same_call_everywhere):
    # ranks that time out in the same call are collective-timeout's (a rank elsewhere, hung or slow), and a rank whose
    # peer is gone says "Connection closed by peer" (gloo-peer-closed), not a timeout.
    _sig("collective-mismatch", r"(?:distributed_c10d\.py\", line \d+, in \w+|autograd[/\\]graph\.py\", line \d+, in "
         r"_engine_run_backward|[/\\]deepspeed[/\\](?:\w+[/\\]){0,4}\w+\.py\", line \d+, in \w+)\n(?:(?!Traceback \(most recent call last\))[^\n]*\n){0,12}?[^\n]*?" + _GLOO_WAIT,
         "The ranks timed out waiting in different collectives: one rank's timeout was raised inside one call (e.g. "
         "barrier) and another's inside another (e.g. all_reduce, or loss.backward(), where DDP all-reduces the "
         "gradients), so each waited for peers that were in another collective. Code calls a collective on some ranks "
         "only (inside `if rank == 0:` or `if accelerator.is_main_process:`, or under a condition on a rank's own loss "
         "or metric that differs between ranks), or the ranks ran different numbers of steps (data sharded unevenly "
         "by hand, without DistributedSampler or Join).",
         "Make every rank call the same collectives in the same order: decide conditions on values all-reduced "
         "across the ranks, take collectives (barrier, all_reduce, a save that synchronizes) out of rank-only "
         "branches, give every rank the same number of batches (DistributedSampler, drop_last=True, or "
         "torch.distributed.algorithms.Join for uneven inputs). TORCH_DISTRIBUTED_DEBUG=DETAIL names the calls that "
         "differ. A restart fails the same way.", retry=False, aside_if=_same_call_everywhere),
    # Round 182: gloo's context.cc, Context::Context(rank, size): GLOO_ENFORCE_LT(rank, size), printed "[enforce fail
    # at .../gloo/context.cc:N] rank < size. RANK vs SIZE" when ProcessGroupGloo is built for a rank that is not below
    # the world size it was given (torch passes both on from init_process_group). Only gloo's enforce line: not
    # torch's new_group "Rank N is out of range", nor a tensor's or a library's own rank checks.
    _sig("rank-not-below-world-size", r"gloo[/\\]context\.cc:\d+\] rank < size\. \d+ vs \d+",
         "A process was given a rank not below the world size it was given (gloo's rank < size): its WORLD_SIZE "
         "counts fewer processes than were launched, or its rank was numbered past them. Most often the script sets "
         "them itself: os.environ[\"WORLD_SIZE\"] or RANK assigned in the script (left from single-process debugging), "
         "init_process_group(world_size=..., rank=...) passed by hand, a rank computed from the node and local rank "
         "with the wrong count per node.",
         "Let the launcher set them: call init_process_group(backend) or deepspeed.init_distributed() without rank "
         "and world_size, and do not assign RANK or WORLD_SIZE in the script; where they must be computed, rank = "
         "node_rank x processes per node + local_rank and world_size = nodes x processes per node. A restart fails "
         "the same way.", retry=False),
    # Round 182: torch.distributed given a backend name it has no process group for: distributed_c10d.py's
    # _new_process_group_helper, `raise AssertionError(f"Unknown backend type {backend}")` (torch 2.13; torch 2.0-2.x
    # asserted f"Unknown c10d backend type {backend_str.upper()}"), Backend's device map for a name without a device,
    # "Unknown backend '{backend}'. Specify a 'device:backend' string" (2.13), and torch 1.x's Backend.__new__,
    # ValueError("Invalid backend: '{}'") (only in distributed_c10d.py's frame: other libraries say those words).
    # A vendor backend (hccl, ccl, mccl, flagcx) is known only once its package registered it on import.
    _sig("dist-backend-unknown", r"\bUnknown c10d backend type [\w-]+|\bAssertionError: Unknown backend type [\w-]+|"
         r"\bUnknown backend '[^'\n]{1,40}'\. Specify a 'device:backend' string|"
         r"distributed_c10d\.py\"?, line \d+, in __new__\s*\n(?:[^\n]*\n){0,3}?[^\n]*ValueError: Invalid backend: '",
         "torch.distributed was given a backend name it has no process group for: the name is misspelt (its own "
         "backends are gloo, nccl, mpi, ucc, xccl), or it is a vendor's backend (hccl, ccl, mccl...) that its package "
         "registers when imported (torch_npu, oneccl_bindings_for_pytorch), not installed or not imported before "
         "init_process_group.",
         "Spell the backend as torch names it (gloo for CPU, nccl for NVIDIA GPUs; a device map such as "
         "'cpu:gloo,cuda:nccl'), or install the vendor's package and import it before init_process_group (import "
         "torch_npu for hccl, oneccl_bindings_for_pytorch for ccl). A restart fails the same way.", retry=False),
    # Round 186 (live): torch.distributed's object collectives (distributed_c10d.py) write what they receive into the
    # caller's list by index: all_gather_object `object_list[i] = _tensor_to_object(...)` (gather_object on dst:
    # `object_gather_list[i] = ...`, broadcast_object_list off src likewise), so a list shorter than the group (an
    # empty one, as for append) raises CPython's "IndexError: list assignment index out of range" under that line;
    # scatter_object_list checks its own: "Expected argument scatter_object_output_list to be a list of size at least
    # 1." (torch 1.8 to 2.13). Only under those frames: an IndexError elsewhere is the user's own.
    _sig("object-collective-output-list", r"distributed_c10d\.py\"?, line \d+, in (?:all_gather_object|gather_object|"
         r"broadcast_object_list)\n[^\n]*\bobject(?:_gather)?_list\[i\] = _tensor_to_object\([^\n]*\n(?:[^\n]*\n){0,2}?"
         r"[^\n]*?IndexError: list assignment index out of range|Expected argument scatter_object_output_list to be a "
         r"list of size at least 1",
         "An object collective was given an output list too short to hold what it receives: all_gather_object (and "
         "gather_object on dst) assigns each rank's object by index into the list, which must already hold one "
         "entry per rank of the group, and scatter_object_list writes into entry 0 of a list of at least one; an "
         "empty list (as for append) or one sized for another group fails.",
         "Pass a list of the right length, filled with placeholders: out = [None] * torch.distributed."
         "get_world_size(group) for all_gather_object (and gather_object on dst), out = [None] for "
         "scatter_object_list; read the results from that list after the call. A restart fails the same way.",
         retry=False),
    # Round 186 (live): the object collectives (all_gather_object, gather_object, broadcast_object_list,
    # scatter_object_list) pickle each object in distributed_c10d.py's _object_to_tensor, `_pickler(f).dump(obj)`
    # (torch 1.8 to 2.13), and pickle refuses part of it (sigwords._PICKLE_REFUSED, CPython's words: a lambda or
    # local function, a generator, a lock, an open file). Only under that frame: a DataLoader's, a Pool's or
    # torch.save's pickling are their own signatures.
    _sig("object-collective-unpicklable", r"distributed_c10d\.py\"?, line \d+, in _object_to_tensor\n[^\n]*_pickler\("
         r"f\)\.dump\(obj\)\n(?:(?!Traceback \(most recent call last\))[^\n]*\n){0,12}?[^\n]*?(?P<ev>" + _PICKLE_REFUSED +
         ")",
         "An object collective (all_gather_object, gather_object, broadcast_object_list, scatter_object_list) pickles "
         "the objects it sends, and this one holds something pickle cannot save: a lambda or a function or class "
         "defined inside another function (<locals>), a generator (a generator expression, a lazy map or reader), "
         "a lock, an open file or a connection. The message names it.",
         "Send plain data: turn generators into lists (list(...)), drop functions from the object or define them at "
         "module level (and rebuild them on the receiving rank), send a file's path instead of the open file, and "
         "keep locks and connections out of what is sent. A restart fails the same way.", retry=False),
    # Round 186 (live): gather's and scatter's root-only lists (distributed_c10d.py, _validate_output_list_for_rank:
    # "Argument ``gather_list`` must NOT be specified on non-destination ranks." / "must be specified on destination
    # rank.", raised by gather and gather_object; scatter's "Argument ``scatter_list`` must NOT be specified on
    # non-source ranks." / "must be specified on source rank."; scatter_object_list's "source rank must provide
    # non-None scatter_object_input_list"; torch 1.x to 2.13 say the same).
    _sig("gather-scatter-list-rank", r"Argument ``?(?:gather|scatter)_list``? must (?:NOT )?be specified on "
         r"(?:non-)?(?:destination|source) ranks?|source rank must provide non-None scatter_object_input_list",
         "gather / gather_object and scatter / scatter_object_list take their list on the root rank only: the "
         "gather list (object_gather_list) must be given on dst and be None on every other rank, the scatter list "
         "(scatter_object_input_list) given on src and None elsewhere. The call gave it on a rank that must not, or "
         "left it out on the root.",
         "Pass the list on the root only: out = [None] * world_size if rank == dst else None, then "
         "gather_object(obj, out, dst=dst) (likewise scatter's input list on src only); or use all_gather_object "
         "where every rank needs the result. A restart fails the same way.", retry=False),
    # Round 184: DDP's reducer (torch/csrc/distributed/c10d/reducer.cpp, Reducer::mark_variable_ready: "Expected to mark
    # a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter
    # outside the `forward` function. ... 2) Reused parameters in multiple reentrant backward passes") where the rank's
    # traceback runs through no autograd.Function's backward (torch/autograd/function.py apply's `return user_fn(`,
    # torch < 2 `self._forward_cls.backward(`, torch.utils.checkpoint, DeepSpeed's or Megatron's checkpointing): no
    # reentrant backward, so a parameter used outside forward (find_unused_parameters=True marked it unused after the
    # forward, then its gradient arrived). Without such a traceback it stays sigmessages' ddp-reentrant-checkpoint.
    _sig("ddp-param-outside-forward", r"Traceback \(most recent call last\):[ \t]*\n(?:(?![^\n]*(?:checkpoint|user_fn\(|"
         r"_forward_cls\.backward|Traceback \(most))[^\n]*\n){1,80}?[^\n]*RuntimeError: Expected to mark a variable ready "
         r"only once\b",
         "DistributedDataParallel saw a parameter's gradient arrive after it had marked the parameter ready, with no "
         "reentrant backward (checkpointing) in the traceback: a parameter of the wrapped model used outside its "
         "forward (a learnable temperature or scale, a loss weight, an embedding read through model.module in the "
         "loss) while find_unused_parameters=True: DDP marks what the forward's output does not reach as unused, "
         "then its gradient comes in the backward. Or the wrapped model run twice before one backward.",
         "Use the parameter inside the model's forward (return the scaled logits, or pass what the loss needs "
         "through forward), or turn find_unused_parameters off when every parameter gets a gradient (it was not "
         "needed); one forward of the DDP module per backward. TORCH_DISTRIBUTED_DEBUG=DETAIL names the parameter. "
         "A restart fails the same way.", retry=False),
)


# DDP's constructor in a rank's traceback, at the point where it compares or broadcasts the model's parameters.
_BUILDING_DDP = re.compile(r"in (?:_sync_module_states|_sync_params_and_buffers|_verify_param_shape_across_processes)\b")


def _building_ddp(texts: Iterable[str]) -> bool:
    return any(_BUILDING_DDP.search(t) for t in texts)

"""Failure signatures of how the ranks find and count each other, from round 29 of issue 45 (threads where a forum's
or a project's answer established the cause): Gloo refusing to pair an IPv4 address with an IPv6 one, and DeepSpeed's
batch-size check made while it counts a world of one process; round 151 added DeepSpeed's MPI discovery counting
another world than the torch.distributed already initialized; round 188 a wrapper's method misused by name (named
uncalled in a with statement, hidden by a value assigned to the attribute of its name). Each pattern is the wording of
the component that prints it (Gloo's tcp/device.cc, DeepSpeed's runtime/config.py and comm/comm.py, CPython's ceval),
never one log's. sigmessages.py
places this table with PyTorch's own (sigtorch.py), before the core table's network family and DeepSpeed's batch check
(ds-batch-assert), which would otherwise answer with the batch numbers. The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

import re

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import found_in_any

_PIPE_GRID = re.compile(r"Using topology: \{ProcessCoord\(pipe=")

# Round 186 (live): a collective called with a group this rank is not in. torch's distributed_c10d.py
# _warn_not_in_group: "Running OP on global rank N which does not belong to the given group." (a UserWarning, printed
# before the traceback: sigmessages.READS_BEFORE), and the call returns at once with its output untouched; the script
# then fails on the None it left (an object list's entries). Only the warning followed by an error on a NoneType.
NOT_IN_GROUP = _sig("collective-rank-not-in-group", r"Running \w+ on global rank -?\d+ which does not belong to the given "
                    r"group\.[^\n]{0,200}\n(?:[^\n]{0,1000}\n){0,60}?[^\n]{0,80}?(?P<ev>\b[A-Za-z]\w*(?:Error|Exception): "
                    r"[^\n]{0,200}?\bNoneType\b[^\n]{0,200})",
                    "A collective was called on a rank that is not in the group it was given (a subgroup made with "
                    "new_group(ranks) that leaves this rank out): torch only warns (\"... which does not belong to the "
                    "given group\") and returns at once, leaving the output as it was (None in an object list), and "
                    "the script then used it.",
                    "Call a subgroup's collectives only on its members (if rank in group_ranks: ...), or give the "
                    "call a group every calling rank belongs to; torch.distributed.get_rank(group) is -1 outside it. "
                    "A restart fails the same way.", retry=False)
WORLD_READS_BEFORE = (NOT_IN_GROUP,)

WORLD_SIGNATURES: tuple[Signature, ...] = (
    NOT_IN_GROUP,
    # Gloo's tcp transport, Device::connect (later Device::isInitiator): the two ends of a pair are ordered by their
    # addresses, after GLOO_ENFORCE_EQ(ss1.ss_family, ss2.ss_family) of the local and the remote sockaddr, printed
    # "[enforce fail at .../gloo/transport/tcp/device.cc:N] ss1.ss_family == ss2.ss_family. A vs B" (2 = AF_INET,
    # 10 = AF_INET6 on Linux). It fails only where one end has an IPv4 address and the other an IPv6 one.
    _sig("ip-family-mismatch", r"ss1\.ss_family == ss2\.ss_family\. \d+ vs \d+",
         "Two ranks' Gloo addresses are of different families, one IPv4 (2) and one IPv6 (10): on hosts with both "
         "network stacks one rank resolved its host name (or MASTER_ADDR) to an IPv4 address and another to an IPv6 "
         "one, and Gloo cannot connect the two.",
         "Make every node use the same address family: set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to an "
         "interface that has an IPv4 address on every node, give MASTER_ADDR / the rendezvous endpoint as an IPv4 "
         "address rather than a host name or 0.0.0.0, and make every host name resolve the same way on all nodes "
         "(/etc/hosts, /etc/gai.conf).", retry=False),
    # Session 32: _batch_assertion's words where rank 0 printed a PipelineModule's grid (deepspeed/runtime/pipe/
    # topology.py, PipelineParallelGrid: "Using topology: {ProcessCoord(pipe=0, data=0): 0, ...}", any stream):
    # DeepSpeedConfig takes the grid's data-parallel size (world / stages), while train_batch_size was written, or
    # derived by a tool, for every process. Before ds-world-size-one, whose "* 1" one data-parallel copy prints too.
    _sig("ds-pipe-batch-dp", r"train_batch_size is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size",
         "The model is a PipelineModule: DeepSpeed checks the batch sizes against the data-parallel size, the world "
         "size divided by the pipeline stages (the last number in its message), while train_batch_size was written "
         "for every process, or derived for every process by a tool that does not know the stages (dscluster fills "
         "it in when only the micro batch is given).",
         "Write all three batch keys for the data-parallel size: train_batch_size = train_micro_batch_size_per_gpu x "
         "gradient_accumulation_steps x (world size / pipeline stages); dscluster takes three keys that agree with "
         "such a size as written. A restart fails the same way.", retry=False,
         aside_if=lambda _m, texts: not found_in_any(_PIPE_GRID, texts)),
    # DeepSpeed's runtime/config.py, _batch_assertion: "Check batch related parameters. train_batch_size is not equal
    # to micro_batch_per_gpu * gradient_acc_step * world_size {train_batch} != {micro_batch} * {grad_acc} *
    # {world_size}" (with no space before the numbers before DeepSpeed#1734). DeepSpeedConfig takes the world size
    # from the process group when one is up and counts 1 otherwise, so a trailing "* 1" is a world of one process: one
    # process was launched, or the config was built before the process group (DeepSpeed 0.9.0's engine, DeepSpeed#3228;
    # zero.Init inside from_pretrained, DeepSpeed#3341). The exact lines of config.py were not read in this session;
    # the threads' analyses quote them. A rich traceback box may wrap the numbers over lines.
    _sig("ds-world-size-one", r"gradient_acc_step\s+\*\s+world_size ?\d+\s*!=\s*\d+\s*\*\s*\d+\s*\*\s*1(?![\d.])",
         "DeepSpeed counted a world of 1 process when it checked the batch sizes: either one process was launched "
         "(plain python instead of torchrun/deepspeed), or several were and DeepSpeed built its config before the "
         "process group was up, so each saw world size 1 (DeepSpeed 0.9.x under Accelerate or the Trainer, "
         "ZeRO-3's zero.Init inside from_pretrained); the train_batch_size it was given does not fit a world of one.",
         "If several processes were launched, let DeepSpeed derive the total: set train_batch_size to \"auto\" or "
         "leave it out and give train_micro_batch_size_per_gpu and gradient_accumulation_steps, or use a DeepSpeed "
         "release without the early count (0.8.3, or a later fixed one) with a matching transformers/accelerate; if "
         "one process was meant, launch with torchrun/deepspeed or set train_batch_size = micro batch x gradient "
         "accumulation.", retry=False),
    # Round 151: DeepSpeed's MPI discovery (deepspeed/comm/comm.py mpi_discovery; runtime/engine.py _mpi_check before
    # 0.6), run when no launcher set RANK/WORLD_SIZE/MASTER_ADDR, reads rank and size from mpi4py's COMM_WORLD and, when
    # torch.distributed is already up, asserts "MPI rank {} does not match torch rank {}" and "MPI world size {} does
    # not match torch world size {}". Only those words: not DeepSpeed's "Discovered MPI settings of world_rank=..."
    # INFO line (no failure), nor ZeRO's "used a DP world size of N but the current world size is M" (a checkpoint).
    _sig("ds-mpi-world-size-mismatch", r"MPI (?:world size \d+ does not match torch world size|rank \d+ does not match "
         r"torch rank) \d+",
         "DeepSpeed read the ranks from MPI while torch.distributed had already been initialized with other numbers: "
         "two launchers counted the job. Either it was started by an MPI launcher and the script (or its framework) "
         "initialized torch.distributed itself from another count (its own world size, the GPUs of one node: "
         "DeepSpeed's Megatron example does not support an MPI launch), or another launcher (Lightning's, a spawn) "
         "started the processes and each is an MPI world of its own.",
         "Start the job one way: the deepspeed launcher (or torchrun) without an MPI launcher around it, or an MPI "
         "launcher with the script leaving torch.distributed to deepspeed.init_distributed() (or initializing it from "
         "the MPI job's OMPI_COMM_WORLD_SIZE/RANK); the MPI launcher's process count must be nodes x GPUs per node. A "
         "restart fails the same way.", retry=False),
    # Round 187 (live): copy.deepcopy of an object that holds a torch.distributed process group - the DeepSpeed
    # engine deepspeed.initialize returned, a DistributedDataParallel/FSDP wrapper, a ZeRO optimizer - made for an EMA,
    # teacher or reference model after wrapping. copy.py's deepcopy falls back to __reduce_ex__ (its frames: deepcopy,
    # _reconstruct, _deepcopy_dict, `rv = reductor(4)`), and the c10d ProcessGroup object (torch/csrc/distributed/c10d
    # bindings, ProcessGroupNCCL/ProcessGroupGloo in torch 1.x) has no pickle support: Objects/typeobject.c's "cannot
    # pickle 'torch._C._distributed_c10d.ProcessGroup' object" ("can't pickle ... objects" before Python 3.8). Only
    # under copy.py's frames: torch.save of the engine or a spawn's pickling of it are other mistakes.
    _sig("deepcopy-process-group", r"copy\.py\"?,? line \d+,? in (?:deepcopy|_reconstruct|_deepcopy_\w+)\n"
         r"(?:[^\n]*\n){0,4}?[^\n]*?(?P<ev>TypeError: (?:cannot pickle '(?:torch\._C\._distributed_c10d\.)?"
         r"ProcessGroup\w*' object|can't pickle (?:torch\._C\._distributed_c10d\.)?ProcessGroup\w* objects))",
         "copy.deepcopy was given an object that holds a torch.distributed process group, which cannot be copied: "
         "the engine deepspeed.initialize returned, a DistributedDataParallel or FSDP wrapper, or a DeepSpeed/ZeRO "
         "optimizer, typically to make an EMA, teacher or reference copy of the model after it was wrapped.",
         "Copy the plain model, never the wrapper: deepcopy the module before deepspeed.initialize / DDP(...) and keep "
         "the copy outside the engine, or copy engine.module / model.module (under ZeRO-3 the module holds only "
         "partitions: build the copy from a consolidated state dict, or inside deepspeed.zero.GatheredParameters). "
         "A restart fails the same way.", retry=False),
    # Round 188 (live): a wrapper's context-manager method named in a with statement without the call (`with
    # model.no_sync:` for DDP's gradient accumulation, `with torch.no_grad:`): CPython 3.11+'s ceval "'method' object
    # does not support the context manager protocol" ('function', 'type' for a class; before 3.11 a bare
    # "AttributeError: __enter__", which says less and is left alone).
    _sig("method-not-called-in-with", r"TypeError: '(?:method|function|builtin_function_or_method|type)' object does "
         r"not support the (?:asynchronous )?context manager protocol",
         "A with statement was given a method, function or class itself instead of what calling it returns: the "
         "parentheses are missing (`with model.no_sync:` for DDP's gradient accumulation, `with torch.no_grad:`, "
         "`with accelerator.accumulate:`), and Python refuses the uncalled method as a context manager.",
         "Call it in the with statement: `with model.no_sync():`, `with torch.no_grad():`, `with "
         "accelerator.accumulate(model):` (the line of the traceback shows which). A restart fails the same way.",
         retry=False),
    # Round 188 (live): a library's own call of one of its methods (`self.NAME()` on the failing source line, no other
    # call before it there) answered with CPython's "'int' object is not callable": the instance attribute NAME was
    # assigned a plain value that now hides the method (`engine.gradient_accumulation_steps = 4` on a DeepSpeed engine,
    # read by its is_gradient_accumulation_boundary). Not 'NoneType' (a callback left unset is another mistake).
    _sig("method-overwritten-by-value", r"File \"[^\"\n]*\", line \d+, in \w+\n(?:\[rank\d+\]: )?"
         r"(?:[^\n(]|(?<!\w)\()*?\bself\.\w+\([^\n]*\n(?:(?:\[rank\d+\]: )?[ \t]*[~^][~^ \t]*\n)?"
         r"(?P<ev>(?:\[rank\d+\]: )?TypeError: '(?:int|float|str|bool|list|dict|tuple)' object is not callable)",
         "A method of an object was replaced by a plain value: the script assigned a number, string or list to an "
         "attribute with the method's name (engine.gradient_accumulation_steps = 4 on a DeepSpeed engine, as one "
         "sets accelerator.gradient_accumulation_steps), so the library's own call self.NAME() on the line shown "
         "finds that value instead of its method.",
         "Remove that assignment (search the script for `.NAME = `, NAME being the method on the traceback's line) "
         "and give the value where the library takes it: for DeepSpeed, gradient_accumulation_steps (and the batch "
         "sizes) in the ds_config passed to deepspeed.initialize; read it back by calling the method. A restart fails "
         "the same way.", retry=False),
)

"""Failure signatures of PyTorch's own distributed machinery (round 24 of issue 45): DistributedDataParallel given a
module that is not on the one GPU its device_ids name, FSDP run on a process whose current CUDA device is not the
rank's, a collective on a tensor dtype the backend has no reduction for (bool on NCCL before 1.7, on gloo), a build of
torch without torch.distributed, NCCL refused its shared-memory segment, and the elastic agent forwarding the hang-up
it received. Each pattern is the wording of the component that prints it (torch/nn/parallel/distributed.py,
torch/distributed/fsdp/_init_utils.py and _flat_param.py, ProcessGroupNCCL.cpp and ProcessGroupGloo.cpp,
torch/distributed/__init__.py, NCCL's shm.h and shmutils.cc, torch/distributed/elastic/multiprocessing/api.py and
agent/server/api.py), never one log's. Round 30 added the rendezvous store's address that does not resolve (c10d's
TCPStore client: torch/csrc/distributed/c10d/socket.cpp, older Utils.cpp); round 48 the backward of
torch.distributed.nn's all_gather on a subgroup (torch/distributed/nn/functional.py before 2.3); round 57 FSDP
given a state-dict type of None (fully_sharded_data_parallel.py); round 76 the ranks that did not all join a process
group in time (distributed_c10d.py's store-based barrier); round 77 an optimizer state resumed into other parameter
groups (torch/optim/optimizer.py); round 88 FSDP's CPU offload refused on a single GPU (NO_SHARD) and its state-dict
hook missing a parameter's name (_unshard_param_utils.py, _state_dict_utils.py); round 93 a device index of -1, a
local rank no launcher set (torch's Python argument parser); round 104 gloo's device factory given no interface and
an empty host name (GlooDeviceFactory.cpp); round 106 non-reentrant activation checkpointing's recomputation that
differs from the forward (torch/utils/checkpoint.py), a parameter still sharded when it re-ran; round 128 an all-gather
given an output buffer of another dtype than its input (ProcessGroupNCCL.cpp's _allgather_base); round 126 DTensor's
dispatcher given plain tensors beside DTensors (context parallel's math SDPA, a tensor left out of a TP/FSDP2 plan).
sigmessages.py places this table before the training stack's: more specific than the installed-package answer
(import-name) and /dev/shm's size (dev-shm-full). The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py). FSDP1's own signatures are in sigfsdp.py and gloo's in siggloo.py, each spliced
into this table in its place."""

from __future__ import annotations

import re

from dscluster.sigfsdp import FSDP_SIGNATURES
from dscluster.siggloo import GLOO_SIGNATURES
from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import found_in_any

_TCP_INIT = re.compile(r"rendezvous\.py\"?, line \d+, in _tcp_rendezvous_handler")

# torch.distributed's core API, which every build with distributed support has (torch/distributed/__init__.py imports
# it from distributed_c10d when is_available()); its absence is a build without distributed, not another version.
_CORE = (r"init_process_group|is_initialized|get_rank|get_world_size|barrier|all_reduce|broadcast|new_group|"
         r"ProcessGroup|ReduceOp|destroy_process_group")

# torch's Python argument parser for a device given as an int (torch/csrc/utils/python_arg_parser.h toDevice, and
# torch.device(type, index) in torch/csrc/Device.cpp: "Device index must not be negative"); torch 0.4's
# torch/csrc/utils/device.cpp said "device index must be positive, got -1". Python forbids the -1 that ATen reads as
# "the current device", so the index came from a variable left at its "not set" value: a local rank of -1.
# c10's own check of an index below -1 ("Device index must be -1 or non-negative, got -2") is not read. Review 108:
# nor where the error's text shows the -1 came from a CPU tensor's get_device() (Tensor.get_device: -1 on the CPU;
# Wentao-Xu/HIST#12 `torch.device(torch.get_device(x+1))`, uber-research/DeepPruner#38) or from torchtext's legacy
# device=-1 for the CPU (its data/field.py frame, salesforce/densecap#46): a model run on the CPU, not a local rank.
# Read with the lines before the error (sigmessages.READS_BEFORE): IPython shows the frames there, not in the block.
LOCAL_RANK_NEGATIVE = _sig(
    "local-rank-negative", r"\A(?![\s\S]*?(?:\bget_device\(|[/\\]torchtext[/\\]))[\s\S]*?"
    r"(?P<ev>Device index must not be negative|device index must be positive, got -\d)",
    "The code moved a tensor or the model to a device given as the number -1, which torch refuses: most often the "
    "rank's local rank left at its \"not set\" value (-1: an --local_rank argument's default that no launcher "
    "passed, a LOCAL_RANK that no launcher set, an engine's local_rank when its launch gave it none, as "
    "DeepSpeed before 0.3.11 under AzureML's MPI launch).",
    "Start the ranks through a launcher that sets the local rank (torchrun, deepspeed, accelerate launch) and read "
    "it from the environment (int(os.environ[\"LOCAL_RANK\"])); under an MPI launcher set LOCAL_RANK from its own "
    "(OMPI_COMM_WORLD_LOCAL_RANK) or use a DeepSpeed that reads it (0.3.11 or later); for one process without a "
    "launcher use device 0 or \"cuda\". A restart fails the same way.", retry=False)

TORCH_SIGNATURES: tuple[Signature, ...] = (
    # torch/nn/parallel/distributed.py: "DistributedDataParallel device_ids and output_device arguments only work with
    # single-device/multiple-device GPU modules or CPU modules, but got device_ids {}, output_device {}, and module
    # parameters {}." (1.8+); before it "... only work with single-device CUDA modules, but got device_ids {} ...".
    _sig("ddp-module-device", r"DistributedDataParallel device_ids and output_device arguments only work with "
         r"single-device(?:/multiple-device)? (?:CUDA|GPU) modules",
         "DistributedDataParallel was given device_ids for a module that is not on that one GPU: the model was "
         "wrapped before it was moved to the rank's GPU (its parameters still on the CPU), or it is spread over "
         "several GPUs (device_map=\"auto\", a model split by hand), where device_ids must not be given.",
         "Move the model to the rank's GPU before wrapping it (model.to(local_rank), then DistributedDataParallel("
         "model, device_ids=[local_rank])); for a model spread over several GPUs pass device_ids=None, or load it "
         "whole on each rank's GPU (no device_map=\"auto\" under DDP). A restart fails the same way.", retry=False),
    *FSDP_SIGNATURES,  # sigfsdp.py, in this place
    # ProcessGroupNCCL.cpp's getNcclDataType ("Unsupported data type for NCCL process group"; torchcomms' "Unsupported
    # tensor data type for NCCL"), and ProcessGroupGloo.cpp's GENERATE_ALL_TYPES, whose default case is "Invalid scalar
    # type" (no bool, no int16, no BFloat16 there: pytorch/pytorch#111131, #113557), raised in the collective's frame of
    # distributed_c10d.py, or in DDP's construction (nn/parallel/distributed.py, distributed/utils.py's module-state
    # broadcast); round 143: told with gloo named in the lines before (ev: the error's line).
    _sig("collective-dtype-unsupported", r"Unsupported (?:tensor )?data type for (?:NCCL|XCCL)(?: process group)?|"
         r"(?:distributed_c10d|distributed[/\\]utils|parallel[/\\]distributed)\.py\"?, line \d+, in \w+\n"
         r"(?:[^\n]*\n){0,4}?[^\n]*Invalid scalar type|"
         r"\bgloo\b(?:(?!\bgloo\b)[^\n])*\n(?:[^\n]*\n){0,8}?[^\n]*?(?P<ev>RuntimeError: Invalid scalar type\b)",
         "A collective was given a tensor of a dtype its backend cannot reduce or move: torch.bool on NCCL before "
         "PyTorch 1.7, torch.bool, int16 or bfloat16 on gloo (its type dispatch has none of them), a dtype the "
         "installed backend lacks.",
         "Cast the tensor before the collective and back after it (t.to(torch.uint8) or t.long() for a bool, "
         "float32 for an unsupported float type: on gloo a bfloat16 model's DDP needs float32 parameters or a "
         "communication hook that casts), or upgrade PyTorch (NCCL takes bool since 1.7). A restart fails "
         "the same way.", retry=False),
    # Round 143: torch.distributed has no backend for Apple's MPS device. ProcessGroupGloo.cpp's tensor check (gloo
    # takes CPU and CUDA tensors) names the op and both TensorOptions: "ProcessGroupGloo::allgather: invalid tensor
    # type at index 0 (expected TensorOptions(... device=cpu ...), got TensorOptions(... device=mps:0 ..." (DDP's
    # parameter check, ultralytics/ultralytics#15701); Lightning's connectors (pytorch/trainer/connectors/
    # accelerator_connector.py, fabric/connector.py) refuse first: "You set `strategy=...` but strategies from the DDP
    # family are not supported on the MPS accelerator."; torch 2.x's BackendConfig (distributed_c10d.py), for
    # init_process_group without a backend on a Mac: "We detected accelerator mps on your machine. But we don't know
    # which communication backend to use for this accelerator." (deepspeedai/DeepSpeed#7148).
    _sig("mps-distributed-unsupported",
         r"strategies from the DDP family are not supported on the\s{1,3}MPS accelerator|"
         r"We detected accelerator mps on your machine\. But we don't know which communication backend|"
         r"ProcessGroupGloo::\w+: invalid tensor type at index \d+ \(expected TensorOptions\([^\n]{0,400}?"
         r"got TensorOptions\(dtype=[\w ]{1,40}, device=mps",
         "Distributed training on Apple's MPS device is not supported: torch.distributed has no backend for MPS "
         "tensors (gloo, the only backend on macOS, takes CPU tensors), so DDP over processes on a Mac's GPU fails; "
         "Lightning refuses the DDP family of strategies on MPS up front.",
         "Train in one process on MPS (no DDP; Lightning: devices=1 and no DDP strategy), or run the distributed "
         "processes on the CPU (accelerator=\"cpu\", the model and tensors on cpu, backend gloo). A restart fails "
         "the same way.", retry=False),
    # torch/distributed/__init__.py defines the API only when torch._C has c10d (is_available()); the macOS binaries
    # before 1.8, NVIDIA's Jetson wheels and builds with USE_DISTRIBUTED=0 lack it.
    _sig("dist-unavailable", r"module 'torch\.distributed' has no attribute '(?:" + _CORE + r")'|"
         r"cannot import name '(?:" + _CORE + r")' from 'torch\.distributed'|"
         r"No module named 'torch\._C\._distributed_c10d'",
         "The installed PyTorch was built without distributed support (torch.distributed.is_available() is False): "
         "the macOS binaries before 1.8, some ARM wheels (NVIDIA Jetson's) and source builds with USE_DISTRIBUTED=0 "
         "leave out torch.distributed's process groups.",
         "Install a PyTorch build with distributed support (the official Linux wheels; on macOS 1.8 or later) and "
         "check it with python -c \"import torch; print(torch.distributed.is_available())\"; on one GPU run without "
         "distributed. A restart fails the same way.", retry=False),
    # NCCL's shm.h ("Call to shm_open failed : %s", older "shm_open failed to open %s") and shmutils.cc ("Error while
    # creating/attaching to shared memory segment %s (size %ld), error: %s (%d)"), with strerror(EACCES).
    _sig("dev-shm-permission", then(r"shm_open|shared memory segment", r"Permission denied|\(13\)"),
         "NCCL could not create its shared-memory segments: /dev/shm is not writable by the user that runs the ranks "
         "(its mode lost the sticky world-writable 1777, or a container or security policy mounts it read-only "
         "for that user).",
         "Make /dev/shm writable for every user on every node (chmod 1777 /dev/shm; in a container --ipc=host or a "
         "writable --shm-size mount), or keep NCCL off it with NCCL_SHM_DISABLE=1 (slower intra-node transfers). "
         "A restart fails the same way.", retry=False),
    # Round 65: torchrun --standalone (torch/distributed/run.py) runs its c10d rendezvous store on this machine and
    # publishes it under the machine's own host name (socket.getfqdn()); c10d's lookup of that name (described below)
    # failing after a standalone launch line is this machine's own name resolving nowhere, which no restart changes,
    # not a master a scheduler names later (read below, restartable). The launch line and the lookup within 40 lines (the
    # launch line's rest read up to another launcher word: linear on many launch words on one line).
    _sig("host-name-unresolvable", then(r"(?:torchrun|torch\.distributed\.run)\b", r"--standalone\b") +
         r"(?:(?!torchrun|torch\.distributed\.run)[^\n])*\n(?:[^\n]*\n){0,40}?[^\n]*?network addresses of "
         r"\([\w.:-]+, \d+\) cannot be retrieved \(gai error: "
         r"-?\d+ - (?:Temporary failure in name resolution|Name or service not known|No address associated with "
         r"hostname)",
         "torchrun --standalone runs its rendezvous store on this machine and announces it under the machine's own "
         "host name, and that name resolves nowhere here (no /etc/hosts line, no DNS that knows it): the ranks cannot "
         "look up their own store.",
         "Make the machine's name resolve: an /etc/hosts line for `hostname` (127.0.0.1 or the machine's IP), or "
         "launch without the name: torchrun --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:29500 (or "
         "--master_addr=127.0.0.1) instead of --standalone, or torchrun's --local-addr=127.0.0.1. A restart fails "
         "the same way.", retry=False),
    # Round 110: the store's host a bare number. c10d's client names the host it was given (torch/csrc/distributed/c10d
    # socket.cpp, read in libtorch_cpu.so's strings: "The client socket has failed to connect to any network address of
    # ({}, {}).", "... has timed out after {} while trying to connect to ({}, {}).", TCPStore.cpp's "TCP client failed
    # to connect/validate to host {}:{} - "); getaddrinfo reads a name of digits only as a 32-bit IPv4 number (inet_aton:
    # 3472853 is 0.52.253.213), so a machine named by a number (torchrun --standalone announces the machine's own name)
    # or a port or job id put where the address belongs is never a store (Project-MONAI/model-zoo#146). A dotted IP, a
    # name with a letter, or an IPv6 address is not it.
    _sig("numeric-host-name", r"(?:failed to connect to any network address of|while trying to connect to) "
         r"\(\d{1,10}, \d{1,5}\)|TCP client failed to connect/validate to host \d{1,10}:\d{1,5} - ",
         "The rendezvous store's host is a bare number: a host name made of digits only (a container or job named "
         "after a number, which torchrun --standalone announces as the store's host), or a number put where the "
         "address belongs (MASTER_ADDR or --rdzv-endpoint given a port or a job id). getaddrinfo reads such a name as "
         "a 32-bit IPv4 address (3472853 is 0.52.253.213), so every rank connects to an address where no store "
         "listens and times out.",
         "Give the store a real address: on one machine --rdzv-endpoint=127.0.0.1:PORT with --rdzv-backend=c10d (or "
         "--master_addr=127.0.0.1) instead of --standalone; across nodes the first node's IP in MASTER_ADDR or "
         "--rdzv-endpoint and the port in MASTER_PORT; or give the machine a host name that is not all digits. A "
         "restart fails the same way.", retry=False),
    # c10d's TCPStore client resolving MASTER_ADDR with getaddrinfo: older torch (1.x, the TCPStore of c10d's Utils.cpp;
    # that source not read here) raises `ValueError: host not found: ` and gai_strerror's words; newer torch
    # (c10d/socket.cpp) logs "The {IPv4 |IPv6 }network addresses of ({host}, {port}) cannot be retrieved (gai error:
    # {code} - {gai_strerror})" while it retries, then times out (read in the installed libtorch_cpu.so's strings). Only
    # gai_strerror's words for a name that does not resolve (EAI_NONAME, EAI_AGAIN, EAI_NODATA), so a store that refuses
    # or drops a connection stays master-unreachable/store-connection.
    # Round 109: that `host not found` with gai_strerror's words for EAI_AGAIN, "Temporary failure in name resolution":
    # no name server this node asked gave an answer for the name, where EAI_NONAME ("Name or service not known") is a
    # name server's answer that the name does not exist (yet): a job operator's master whose service is not up when the
    # worker starts (kubeflow-pytorch-operator-125/333, pytorch-73682), which the entry below restarts. No answer at all
    # comes from a node or a container whose resolver knows no such name, or from a MASTER_ADDR that is no host name
    # (mmcv's Slurm init taking `scontrol show hostname`'s output where the container has no scontrol: mmcv-700): a
    # restart asks the same resolver the same name.
    _sig("master-unreachable", r"\bhost not found: Temporary failure in name resolution",
         "Ranks could not reach rank 0's rendezvous store: this node's resolver got no answer at all for MASTER_ADDR "
         "(\"Temporary failure in name resolution\"): no name server or /etc/hosts this node (or this container) reads "
         "knows the name, or MASTER_ADDR is no host name at all: text a script captured from a command that failed "
         "(a cluster init taking `scontrol show hostname` output inside a container without scontrol).",
         "Print MASTER_ADDR as the rank sees it and look it up on every node, inside the container (getent hosts "
         "NAME); set it to an address or a name every node resolves (the first host of the job's node list, taken "
         "in the batch script outside the container, where scontrol exists, and passed in as MASTER_ADDR). A "
         "restart fails the same way.", retry=False),
    # Round 141: c10d's client did get an address for the store's host (socket.cpp names the address it tried,
    # reverse-resolved, in brackets) and the kernel refused the connect() itself: `failed to connect to [HOST]:PORT
    # (errno: 22 - Invalid argument)`, an address no socket of this node can reach as given (an IPv6 link-local
    # address without its %interface, pytorch#108047; a cloud VM's own name served as an address its peers cannot use,
    # monarch#1571, fixed by the IP as MASTER_ADDR). The name resolved, so the IPv6 lookup's warning beside it
    # (`The IPv6 network addresses of (HOST, PORT) cannot be retrieved`) is not a master whose name is not served yet
    # (below): a restart connects to the same address.
    _sig("master-unreachable", r"client socket has failed to connect to \[[^\][\n]{1,300}\]:\d+ \(errno: 22 - Invalid "
         r"argument\)",
         "Ranks could not reach rank 0's rendezvous store: MASTER_ADDR resolved, but to an address this node's kernel "
         "refuses to connect to as given (connect: Invalid argument): an IPv6 link-local address (fe80::) without "
         "its %interface, or a host name (a cloud VM's own name) that resolves here to an address not usable as a "
         "destination.",
         "Set MASTER_ADDR (the rendezvous endpoint) to the master's IP address on the training network, one every "
         "node reaches (ip -br addr on the master); for a link-local IPv6 address add its interface (fe80::1%eth0) "
         "or use a global address. A restart connects to the same address and fails the same way.", retry=False),
    # Round 182: the same c10d lookup, no such name (EAI_NONAME), where the store was made by torch's tcp:// rendezvous
    # (rendezvous.py's _tcp_rendezvous_handler frame): the host was written into init_method, not handed over by a
    # launcher or a job operator that names the master late (master-unreachable's restart), so a restart cannot help.
    _sig("init-method-host-unresolved", r"network addresses of \([\w.:-]+, \d+\) cannot be retrieved \(gai error: -?\d+ - "
         r"Name or service not known",
         "init_process_group's init_method=\"tcp://HOST:PORT\" names a host this node cannot resolve: the address is "
         "written into the script (or its arguments), a head node of another cluster, a typo, a name only the first "
         "node knows; with tcp:// every rank, rank 0 too, connects to that name.",
         "Use the launcher's rendezvous: init_process_group(backend) with no init_method (env://, with the MASTER_ADDR "
         "and MASTER_PORT the launcher sets), or put there the first node's address as every node resolves it "
         "(getent hosts NAME). A restart fails the same way.", retry=False,
         aside_if=lambda _m, texts: not found_in_any(_TCP_INIT, texts)),
    _sig("master-unreachable", r"\bhost not found: (?:Name or service not known|Temporary failure in name resolution|"
         r"No address associated with hostname|nodename nor servname provided)|"
         r"network addresses of \([\w.:-]+, \d+\) cannot be retrieved \(gai error: -?\d+ - (?:Name or service not "
         r"known|Temporary failure in name resolution|No address associated with hostname)",
         "Ranks could not reach rank 0's rendezvous store: MASTER_ADDR is a host name this node could not resolve "
         "when the rank started. Either the name is in no DNS or /etc/hosts this node reads (a typo, a name only the "
         "first node knows), or a scheduler (a Kubernetes PyTorchJob, a job operator) gives the master its name only "
         "once its pod or service is up, and this worker started first.",
         "Check the name on every node (getent hosts NAME); use an address or a name all nodes resolve. Under a job "
         "operator, have workers wait until the master's name resolves and its port answers (an init container "
         "polling the port, not only nslookup): a restart once the master is up gets through."),
    # Round 76: torch/distributed/distributed_c10d.py's _store_based_barrier, which init_process_group (new_group too)
    # runs before returning: every rank adds itself to a counter in the rendezvous store and waits for world_size;
    # past the group's timeout it raises "Timed out initializing process group in store based barrier on rank: {},
    # for key: {} (world_size={}, worker_count={}, timeout={})" (RuntimeError, 1.8-1.13), "... on rank {}, for key: {}
    # (world_size={}, num_workers_joined={}, timeout={})" (DistStoreError, 2.x). Not its info lines ("Waiting in store
    # based barrier ...", "Completed store-based barrier ..."), which a run that goes on prints too.
    _sig("store-barrier-timeout", r"Timed out initializing process group in store based barrier\b",
         "Not every rank joined the process group within its timeout (init_process_group's store-based barrier, "
         "which counts the ranks that arrived: worker_count or num_workers_joined against world_size). Fewer arrived "
         "than world_size: some ranks reached init_process_group later than the timeout allows (rank 0 or a node "
         "still preparing data, downloading or loading a model before it) or never (a node not started, a world size "
         "larger than the ranks launched). More arrived than world_size: another run's ranks counted in the same "
         "store (the same init file of init_method='file://' left from an earlier run, or the same port).",
         "Start every rank and make WORLD_SIZE match the ranks launched; do long data preparation before the ranks "
         "start (or cache it), or raise the timeout of init_process_group(timeout=...) / deepspeed.init_distributed("
         "timeout=...) / the trainer's ddp_timeout; with init_method='file://' use a fresh file per run. A restart "
         "fails the same way.", retry=False),
    # torch/distributed/elastic/agent/server/api.py ("Received {sig} death signal, shutting down workers") and
    # multiprocessing/api.py ("Sending process {pid} closing signal {sig.name}", SignalException "Process {pid} got
    # signal: {sigval}"): the agent forwards the SIGHUP it received to its workers.
    _sig("sighup", r"closing signal SIGHUP\b|Received 1 death signal|Received SIGHUP death signal|"
         r"SignalException: Process \d+ got signal: (?:1\b|SIGHUP|Signals\.SIGHUP)",
         "The launcher received a hang-up (SIGHUP): the terminal or SSH session it was started from closed, and it "
         "stopped its workers with the same signal. The training itself did not fail.",
         "Start the run so that it outlives the session: under dscluster's supervisor (it runs detached), tmux or "
         "screen, or setsid/nohup with the shell's job disowned (nohup alone is undone by launchers that reinstall "
         "SIGHUP's handler); then resume from the last checkpoint."),
    # Round 80: torch's TCPStore server (torch/csrc/distributed/c10d/TCPStore.cpp, TCPStore::waitForWorkers: "Timed out
    # after {} seconds waiting for clients. {}/{} clients joined.", a DistStoreError): the process hosting the store
    # (rank 0) counted fewer ranks than the world size. Its own words, so rank 0 did start: the others were not started
    # (a plain `python train.py` with world_size=2, a node whose launch step exited early) or could not reach it.
    _sig("store-ranks-missing", r"Timed out after \d+ seconds waiting for clients",
         "Rank 0's rendezvous store (torch's TCPStore at MASTER_ADDR:MASTER_PORT) waited for every rank the world size "
         "counts and only the number it prints joined: the others were never started or ended before "
         "init_process_group (the script run with plain python while world_size counts more processes, a world_size "
         "written into the script's init_process_group(world_size=...) larger than the processes launched, another "
         "node's launcher not started, started late or with another --nnodes/--nproc_per_node, a node whose launch "
         "step failed), or they could not reach MASTER_ADDR:MASTER_PORT (a wrong address or interface, a firewall, "
         "a MASTER_ADDR or MASTER_PORT the script sets itself: a free port each rank picks on its own).",
         "Start every rank the world size counts, together: through a launcher (dscluster launch, torchrun "
         "--nproc_per_node N, deepspeed) with the same --nnodes on every node, and the world size taken from the "
         "launcher (init_process_group() without world_size and rank reads WORLD_SIZE and RANK); read the missing "
         "ranks' own logs for "
         "an error before init_process_group; from their nodes check that MASTER_ADDR:MASTER_PORT answers "
         "(`dscluster doctor`) and that the script does not set them itself.", retry=False),
    # Round 80: torch.cuda.get_device_properties (torch/cuda/__init__.py; get_device_capability and get_device_name call
    # it): `if device < 0 or device >= device_count(): raise AssertionError("Invalid device id")`, the quoted form
    # being the raise line a traceback prints. Only torch's casing: another tool's "Invalid device ID" is not it.
    _sig("invalid-device-id", r'(?-i:AssertionError: Invalid device id\b|"Invalid device id")',
         "The code asked torch about a GPU index this process does not have (torch.cuda.get_device_properties, "
         "get_device_capability or get_device_name with an index at or past torch.cuda.device_count()): most often "
         "the global rank used where the node-local rank belongs (ranks 8-15 on a second node of 8 GPUs), device_ids "
         "naming GPUs that CUDA_VISIBLE_DEVICES hides, or CUDA_VISIBLE_DEVICES empty so that no GPU is visible.",
         "Index GPUs by LOCAL_RANK (or torch.cuda.current_device() after torch.cuda.set_device(local_rank)), never "
         "by the global rank; keep device_ids within the GPUs CUDA_VISIBLE_DEVICES shows (nvidia-smi -L on that "
         "node). A restart fails the same way.", retry=False),
    # torch/distributed/nn/functional.py, _AllGather.backward before PyTorch 2.3: `rank = dist.get_rank()` (the global
    # rank) then `gx = torch.empty_like(grad_outputs[rank])`, grad_outputs holding one gradient per rank of the group;
    # on a group smaller than the world (a sequence-parallel group, sp_size < world_size) every rank past the group's
    # size indexes out of range: Python's `IndexError: tuple index out of range` right under that code line (2.3 reads
    # dist.get_rank(group=ctx.group); deepspeedai/DeepSpeed#7809). Copies of that autograd function in other code fail
    # the same way on the same line. Another IndexError (a model's past_key_values[0]) is not it.
    _sig("torch-allgather-subgroup", r"gx = torch\.empty_like\(grad_outputs\[rank\]\)\n(?:[ \t]*[~^][~^ \t]*\n)?"
         r"(?:\[rank\d+\]: ?)?IndexError: tuple index out of range",
         "A differentiable all_gather (torch.distributed.nn.functional.all_gather) ran over a process group smaller "
         "than the world (a sequence-parallel group, sp_size < world_size): in PyTorch before 2.3 its backward picks "
         "this rank's gradient by the global rank instead of the rank within the group, so the ranks past the "
         "group's size index out of range.",
         "Upgrade PyTorch to 2.3 or later (the backward uses the rank within the group), or aggregate the loss "
         "without a differentiable all_gather (an all_reduce of the weighted loss and of the weights, as "
         "DeepSpeed's Ulysses tests do), or use a sequence-parallel group as large as the world. A restart fails "
         "the same way.", retry=False),
    # torch/optim/optimizer.py, Optimizer.load_state_dict: the saved state's param_groups against this optimizer's,
    # first their number ("loaded state dict has a different number of parameter groups"), then each group's length
    # ("loaded state dict contains a parameter group that doesn't match the size of optimizer's group"; bitsandbytes'
    # optimizers raise the same words). A model's load_state_dict (missing keys, size mismatch) is ckpt-model-mismatch.
    _sig("ckpt-optimizer-groups-mismatch", r"loaded state dict has a different number of parameter groups|"
         r"loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
         "The optimizer state being resumed was saved for other parameter groups than the optimizer this run built: "
         "what the model trains changed between the save and the resume (another model or config, layers frozen or "
         "unfrozen, a fine-tune option, adapters added or removed), or the run is set up otherwise (another number of "
         "GPUs or parallel layout where the training code builds its groups from it), so torch's "
         "Optimizer.load_state_dict cannot map the saved state onto it.",
         "Resume with the settings of the run that saved the checkpoint (the same config and command-line options, "
         "the same number of GPUs); if the change is meant, load only the model weights from the checkpoint and start "
         "a new optimizer (a fine-tune or load-from instead of a resume). A restart fails the same way.", retry=False),
    LOCAL_RANK_NEGATIVE,
    # torch/utils/checkpoint.py, non-reentrant activation checkpointing (_checkpoint_hook's unpack, since torch 2.1):
    # the recomputation's saved tensors checked against the forward's, "torch.utils.checkpoint: Recomputed values for the
    # following tensors have different metadata than during the forward pass." then "tensor at position {idx}:" /
    # "saved metadata: {x_meta}" / "recomputed metadata: {recomputed_meta}", each a dict {'shape': ..., 'dtype': ...,
    # 'device': ...}. A recomputed tensor of shape [0] where the forward's was not is a parameter still sharded when the
    # block re-ran: DeepSpeed ZeRO-3 before 0.19.3 left frozen parameters partitioned during the recomputation
    # (deepspeedai/DeepSpeed#8148, "Z3: Support for activation ckpt with frozen params"). Read before the general
    # mismatch below; not a forward's own empty tensor (saved metadata of shape [0]) nor other messages' torch.Size([0]).
    _sig("checkpoint-recompute-sharded-param", r"recomputed metadata: \{'shape': torch\.Size\(\[0\]\)",
         "Activation checkpointing re-ran a checkpointed block in backward while parameters it uses were still sharded: "
         "the recomputed tensors are empty (shape [0]) where the forward's were not, so torch.utils.checkpoint refuses "
         "them. DeepSpeed ZeRO-3 before 0.19.3 left frozen (requires_grad=False) parameters partitioned during the "
         "recomputation; a sharded wrapper (FSDP) put inside the checkpointed block rather than around it does the same.",
         "Under ZeRO-3 upgrade DeepSpeed to 0.19.3 or later on every node (activation checkpointing with frozen "
         "parameters), or use reentrant checkpointing, which does not make this check "
         "(gradient_checkpointing_kwargs={\"use_reentrant\": True}); with FSDP apply activation checkpointing inside "
         "the FSDP units, not FSDP inside the checkpointed block. A restart fails the same way.", retry=False),
    # The same file's other checks of the recomputation against the forward: "A different number of tensors was saved
    # during the original forward and recomputation." (with both counts), the metadata message above, and "trying to
    # save more tensors during recomputation than during the original forward pass." Not its use_reentrant warning nor
    # "Unpack is being triggered for a tensor that was already unpacked once" (saved_tensors read twice in a backward).
    _sig("checkpoint-recompute-mismatch", r"A different number of tensors was saved during the original forward and "
         r"recomputation|Recomputed values for the following tensors have different metadata than during the forward "
         r"pass|trying to save more tensors during recomputation than during the original forward pass",
         "Non-reentrant activation checkpointing re-ran a checkpointed block in backward, and the recomputation did "
         "not repeat the forward: it saved another number of tensors, or tensors of other shapes or dtypes. Something "
         "in the block runs differently the second time: a fused kernel that is not safe to recompute (xformers' "
         "fused SwiGLU), or code whose path depends on state that changed since the forward (a cache, a flag, a "
         "sequence split or padding decided per call, autocast or no_grad around part of it).",
         "Make the checkpointed block compute the same when it re-runs: use the plain PyTorch form of a fused op, keep "
         "caches, flags and autocast the same in the forward and the recomputation; torch.utils.checkpoint's "
         "debug=True (or torch.utils.checkpoint.set_checkpoint_debug_enabled(True)) names the op that differs. "
         "Reentrant checkpointing (use_reentrant=True; the HF Trainer's gradient_checkpointing_kwargs="
         "{\"use_reentrant\": True}) does not make this check. A restart fails the same way.", retry=False),
    # Round 128: ProcessGroupNCCL::_allgather_base (what all_gather_into_tensor calls; the HCCL and other backends'
    # copies use the same words): `if (input_tensor.dtype() != output_tensor.dtype()) throw ... "output tensor must have
    # the same type as input tensor"` (RuntimeError, TypeError in recent torch). Under ZeRO-3 DeepSpeed allocates the
    # gather's output in the dtype it partitioned the parameters in (the config's fp16/bf16) and gathers each
    # parameter's shard: a parameter of another dtype meets it. Not the size check beside it ("output tensor size must
    # be equal to world_size times input tensor size"): another fault. Causes: yangjianxin1/Firefly#127 (fp16 config,
    # bf16 model: the reporter's fix), deepspeedai/DeepSpeed#3654 and #7775 (ZeRO++ quantized weights under bf16),
    # huggingface/trl#6089 (LoRA in float32 with bf16 under DeepSpeed 0.19.2's ZeRO-3, fixed upstream).
    _sig("allgather-dtype-mismatch", r"output tensor must have the same type as input tensor",
         "An all-gather (all_gather_into_tensor) was given an input and an output of different dtypes. Under "
         "DeepSpeed ZeRO-3, which gathers each parameter so, the model's parameters are not all in the precision "
         "ZeRO-3 partitioned them in. Most often the DeepSpeed config enables fp16 while the model's weights are bf16 (its torch_dtype, or "
         "model code that casts itself to bf16; or the reverse); also parameters deliberately kept in another dtype "
         "(PEFT's LoRA weights kept in float32, which some DeepSpeed releases' ZeRO-3 gathers together with bf16 ones) "
         "and ZeRO++'s quantized weights (zero_quantized_weights) under bf16, which some DeepSpeed versions gather as "
         "fp16. Outside ZeRO-3 (FSDP, a script's own all_gather_into_tensor) the output buffer was made in another "
         "dtype than the tensor gathered.",
         "Use one half precision throughout: the DeepSpeed config's fp16/bf16 section (or \"enabled\": \"auto\" with "
         "the HF Trainer) the same as the dtype the model loads in (torch_dtype, --bf16/--fp16 in the training "
         "arguments); bf16 for a model made in bf16. With LoRA weights in float32 under ZeRO-3, upgrade DeepSpeed or "
         "use ZeRO-2; with zero_quantized_weights under bf16, turn it off or use fp16. In a script's own "
         "all-gather, make the output in the input's dtype. A restart fails the same way.", retry=False),
    *GLOO_SIGNATURES,  # siggloo.py, in this place
    # Round 125: ATen's grouped GEMM (torch._grouped_mm, which MoE layers run their experts through: torchtitan's
    # _run_experts_grouped_mm, transformers' grouped experts) in a ROCm build without it: `grouped gemm is not
    # supported on ROCM` (pytorch/pytorch#161366; a fallback came with #162419). Not vLLM/FlashInfer's own "MXFP4
    # grouped gemm is not supported on this device", nor a test's skip reason.
    _sig("grouped-mm-unsupported", r"grouped gemm is not supported on ROCM",
         "The MoE experts run through torch._grouped_mm (grouped GEMM), and this PyTorch's ROCm build does not "
         "implement it: every MoE layer's forward fails on the AMD GPU.",
         "Use a PyTorch whose ROCm build has grouped GEMM (the fallback of pytorch/pytorch#162419, in later "
         "releases), or run the experts without it: torchtitan's MoE use_grouped_mm=False (the for-loop experts), "
         "or the model's non-grouped expert implementation. A restart fails the same way.", retry=False),
    # Round 126: DTensor's dispatcher refusing an operator whose arguments mix plain tensors and DTensors
    # (torch/distributed/tensor/_dispatch.py _try_replicate_spec_for_scalar_tensor; 2.0-2.4's _tensor/dispatch.py):
    # "OP: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed
    # operators!". Its UserWarning beside it ("we are implicitly creating a replicated DTensor for it") is not read.
    _sig("dtensor-mixed-tensor", r"got mixed torch\.Tensor and DTensor, need to convert all torch\.Tensor to DTensor",
         "A DTensor operator (torch's context, tensor or FSDP2 parallelism) got a plain torch.Tensor next to DTensors: "
         "a tensor the parallel plan did not convert. Under context parallel (torch's context_parallel, torchtitan's "
         "CP) scaled_dot_product_attention on its math backend does this: only the flash, memory-efficient and cuDNN "
         "kernels are context-parallel, and the math path adds an attention mask that stays a plain tensor. Under "
         "tensor parallel or FSDP2: a module left out of the plan, a tensor made in the forward (a mask, rotary "
         "frequencies) combined with sharded activations, or gradient clipping over plain and DTensor parameters.",
         "Under context parallel keep attention on the flash, memory-efficient or cuDNN SDPA kernel (bf16/fp16 inputs, "
         "no explicit mask, sdpa_kernel without MATH); else make that tensor a DTensor too (DTensor.from_local or "
         "distribute_tensor on the same mesh, or its module in the parallelize plan) and clip gradients with a "
         "DTensor-aware clip_grad_norm_. A restart fails the same way.", retry=False),
)

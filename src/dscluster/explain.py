"""Failure signatures: text found in a run's logs -> what went wrong and how to fix it.

`explain(text)` returns the most specific known signature (the table is ordered: root causes
before the symptoms they trigger on other ranks, e.g. a CUDA OOM before "NCCL remote process
exited"). The supervisor stores the result in run.json; `dscluster status` shows it.
`retry` says whether restarting can help: a missing module fails the same way every time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dscluster import fsutil, rankerror
from dscluster.i18n import gettext, tr


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    retry: bool = True  # whether a restart of the same command can help
    symptom: bool = False  # what the other ranks see when one fails: never the answer while a rank has its own error

    @property
    def restart_can_help(self) -> bool:
        return self.retry


def _sig(name: str, regex: str, cause: str, fix: str, retry: bool = True, symptom: bool = False) -> Signature:
    return Signature(name, re.compile(regex, re.IGNORECASE | re.MULTILINE), cause, fix, retry, symptom)


# The program's own verdict on its input, as dscluster's entry points print a DsclusterError:
# "error: MESSAGE" then "  fix: HINT" (with "[rank N] " or pdsh's "node: " in front; the words may be
# the zh-TW ones). Case-sensitive on purpose: "ERROR:" lines of libraries are not this. Slurm's own
# parts write "srun: error: NODE: task N: ..." and "slurmstepd-NODE: error: *** STEP ... CANCELLED" about the
# ranks: symptoms, not the program's words.
_PROGRAM_ERROR = re.compile(r"^(?!(?:srun|salloc|sbatch|slurmstepd)[\w.-]*: )(?:[\w.@-]+: )?(?:\[rank \d+\] )?(?:error|錯誤): (?P<msg>\S.*)$"
                            r"(?:\n(?:[\w.@-]+: )?(?:\[rank \d+\] )?\s+(?:fix|解法): (?P<fix>.+)$)?", re.MULTILINE)
# Exit codes of a DsclusterError that the same input reproduces: usage, config/data, permission.
DETERMINISTIC_EXIT_CODES = frozenset({2, 3, 6})

# Ordered: first match wins. Root causes come before the symptoms they cause on other ranks. `retry` is
# whether a restart of the same command can help (restart_can_help): a missing module, a config the
# launcher rejects or a host that is down fail the same way again. `symptom`: what the other ranks see
# when one rank dies; never the answer while a rank has its own error.
SIGNATURES: tuple[Signature, ...] = (
    # Before the program's own verdict: a full disk is the root cause of the errors it triggers (an
    # incomplete checkpoint, a failed write). Not /dev/shm's (that line mentions shm): dev-shm-full below.
    _sig("disk-full", r"^(?!.*shm).*(?:No space left on device|\[Errno 28\]|\bENOSPC\b|Disk quota exceeded|"
         r"PytorchStreamWriter failed writing file)",
         "A disk the run writes to is full (no space left on device).",
         "Free space on that disk, keep fewer checkpoints (the trainer's --keep N), or put checkpoints on "
         "another disk (--save-dir); then `dscluster restart` of the run resumes from the newest committed checkpoint.",
         retry=False),
    # PyTorch's writers do not pass ENOSPC on: torch.save's C++ stream says "basic_ios::clear: iostream
    # error", its zip writer "[enforce fail at inline_container.cc:N] . unexpected pos A vs B". The
    # supervisor then looks at the disk itself (runs/diskspace.py) and says "disk full" with the figures.
    _sig("write-failed", r"basic_ios::clear: iostream error|inline_container\.cc:\d+\].*unexpected pos",
         "A rank failed writing a file (PyTorch's writer reports only that the write failed): most often the "
         "disk is full or over its quota, else a network file system that went away.",
         "Check the free space where the run writes checkpoints (`df -h` on that directory, on every node for "
         "node-local paths); free space, keep fewer checkpoints (--keep N) or put them on another disk (--save-dir)."),
    _sig("local-rank-arg", r"error: unrecognized arguments:.*--local[_-]rank",
         "The script's argument parser does not accept --local_rank=N (--local-rank=N from torch's launchers), which "
         "the launcher passes to every rank.",
         "Launch with --no_local_rank (the rank is in the LOCAL_RANK environment variable), or accept it in the "
         "script: parser.add_argument(\"--local_rank\", \"--local-rank\", type=int, default=-1).", retry=False),
    _sig("argparse-usage", r"^usage: (\S+).*\n(?:.*\n){0,40}?\1: error: ",
         "The script rejected its command-line arguments (its usage line and error are above).",
         "Correct the script's arguments after the script name, then launch again: a restart would fail the same way.",
         retry=False),
    Signature("program-error", _PROGRAM_ERROR,
              "The program rejected its input (its own error message is above).",
              "Fix the setting the message names, then launch again: a restart would fail the same way.",
              retry=False),
    _sig("input-error-exit", r"exits with return code = (?:2|3|6)\b|exited with exit code (?:2|3|6)\b",
         "A rank exited with a config/data (3), usage (2) or permission (6) error code: the same input fails "
         "the same way again.",
         "Read the first failing rank's log, fix the input, launch again.", retry=False),
    _sig("ssh-publickey", r"Permission denied \(publickey",
         "A node refused the cluster's SSH key.",
         "Install the cluster key on every node (`dscluster node start` does it), then run `dscluster doctor`.",
         retry=False),
    _sig("ssh-host-key", r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED",
         "A node's SSH host key is not in the cluster's pinned known_hosts (new or reinstalled node).",
         "Re-publish the node's host key (`dscluster node start` on it), then `dscluster doctor`; "
         "never turn StrictHostKeyChecking off.", retry=False),
    _sig("hostfile-syntax", r"Hostfile contains (?:a bad entry|multiple entries)|Hostfile is empty or not formatted correctly",
         "DeepSpeed could not read the hostfile: each line must be `HOST slots=N`, each host once, no other words.",
         "Fix the hostfile line the message names (e.g. `10.0.0.2 slots=8`), then launch again.", retry=False),
    _sig("ds-include", r"Hostname '[^']*' not found in hostfile|No slot '[^']*' specified on host|"
         r"include_str and exclude_str are mutually exclusive|Cannot specify num_nodes/gpus with include/exclude|"
         r"Num nodes is >1 but no extra nodes available via hostfile|backend does not support (?:worker include/exclusion|"
         r"limiting num nodes/gpus)|requires same number of devices per node|Unable to proceed, no GPU resources available",
         "DeepSpeed's launcher rejected the node/GPU selection: --include/--exclude name a host or slot the hostfile "
         "does not have, or the launcher backend cannot select them.",
         "Use host names exactly as in the hostfile and slot numbers below its slots=N (e.g. --include node1:0,1), "
         "give the same slots on every host for MPI launchers, or drop --num_nodes/--num_gpus when you use --include.",
         retry=False),
    _sig("ssh-unreachable", r"was not reachable via ssh|ssh: connect to host \S+ port \d+: (?:Connection refused|"
         r"Connection timed out|No route to host)|ssh: Could not resolve hostname",
         "A node could not be reached over SSH: it is down, its sshd is not running or listens on another port, or "
         "its name does not resolve.",
         "Check the node with `dscluster doctor`; start its sshd (`dscluster node start`), use the port it listens "
         "on (--ssh_port), or put its IP in the hostfile. Restarting does not bring a node back.", retry=False),
    _sig("launcher-missing", r"launcher '\w+' not installed|(?:mpirun|pdsh|prterun|srun): (?:command )?not found|"
         r"No such file or directory: '(?:mpirun|pdsh|srun)'",
         "The multi-node launcher DeepSpeed was told to use (pdsh, mpirun, srun) is not installed on this node.",
         "Install it (Debian: apt-get install pdsh / openmpi-bin) in the node image on every node, or pick the "
         "launcher that is installed with --launcher.", retry=False),
    _sig("mpi-as-root", r"mpirun has detected an attempt to run as root|prterun has detected an attempt to run as root",
         "Open MPI refuses to run as root unless told to.",
         "Run as a normal user, or pass --allow-run-as-root to mpirun (DeepSpeed: --launcher_args "
         "\"--allow-run-as-root\").", retry=False),
    _sig("mpi-slots", r"There are not enough slots available in the system",
         "mpirun was asked for more processes than the hosts offer slots.",
         "Give each host its real GPU count as slots=N in the hostfile, or ask for fewer processes.", retry=False),
    _sig("mpi-daemons", r"(?:ORTE|PRTE|PMIx) (?:was unable to reliably start|has lost communication with)|"
         r"An ORTE daemon has unexpectedly failed|ORTE does not know how to route a message|(?:orted|prted): (?:command )?not found|"
         r"\b(?:prted|orted)\b.*(?:exited|failed to start)|MPI environment variables are not set",
         "The MPI launcher could not start or keep its daemon on a remote node: the node's ssh, its PATH (orted/prted "
         "not found there), a different MPI version on that node, or a firewall between the nodes.",
         "Check that `ssh NODE which orted` works from the first node, that every node has the same MPI install, and "
         "that the nodes reach each other on all TCP ports (or set btl_tcp_if_include / oob_tcp_if_include to the "
         "training network).", retry=False),
    _sig("cuda-arch-list", r"TORCH_CUDA_ARCH_LIST|invalid literal for int\(\) with base 10: '\d+a'",
         "TORCH_CUDA_ARCH_LIST contains an arch with a suffix (e.g. '9.0a') that this DeepSpeed op builder "
         "cannot parse.", "Set TORCH_CUDA_ARCH_LIST without the suffix (e.g. --env TORCH_CUDA_ARCH_LIST=9.0) "
         "or unset it.", retry=False),
    _sig("driver-too-old", r"NVIDIA driver on your system is too old|CUDA driver version is insufficient for CUDA runtime|"
         r"cudaErrorInsufficientDriver|forward compatibility was attempted on non supported HW|"
         r"unsupported display driver / cuda driver combination",
         "The node's NVIDIA driver is older than the CUDA version torch was built with.",
         "Update the driver on that node, or install a torch build for an older CUDA (one the driver supports, see "
         "nvidia-smi's \"CUDA Version\"); the same image on every node.", retry=False),
    _sig("ninja-missing", r"Ninja is required to load C\+\+ extensions|ninja: (?:command )?not found|"
         r"No such file or directory: 'ninja'",
         "A DeepSpeed op had to be compiled on a node where ninja is not installed (or not on the PATH of the "
         "remote shell; pdsh passes no PATH).",
         "pip install ninja in the same environment on every node, or pre-build the ops in the image "
         "(DS_BUILD_OPS=1 pip install deepspeed) so no compile happens at run time.", retry=False),
    _sig("build-header-missing", r"fatal error: [\w/.+-]+\.h(?:pp)?: No such file or directory",
         "A DeepSpeed/torch op build could not find a header: Python.h (the Python development package), or a CUDA "
         "header (cuda_runtime.h, cusparse.h...: the CUDA toolkit, not only the driver, and CUDA_HOME pointing at it).",
         "Install python3-dev (Python.h) or the CUDA toolkit's development files on every node, set CUDA_HOME, "
         "clear ~/.cache/torch_extensions, then launch again; or pre-build the ops in the image.", retry=False),
    _sig("compiler-unsupported", r"unsupported GNU version|gcc versions later than \d+ are not supported|"
         r"We need GCC \d+ or later|too old version of GCC|unrecognized command[- ]line option '-std=c\+\+\d+'|"
         r"C\+\+\d+ or later compatible compiler is required|less than the minimum required version",
         "The C++ compiler on the node is too old (or too new for nvcc) to build the DeepSpeed/torch op.",
         "Install a gcc/g++ that this CUDA and torch support (point CC/CXX at it), or pre-build the ops in the image; "
         "then clear ~/.cache/torch_extensions.", retry=False),
    _sig("cuda-home-missing", r"CUDA_HOME does not exist|MissingCUDAException|CUDA_HOME environment variable is not set|"
         r"nvcc: (?:command )?not found|No such file or directory: '[^']*/bin/nvcc'",
         "A DeepSpeed op needs the CUDA compiler (nvcc) and it was not found on that node: no CUDA toolkit, or "
         "CUDA_HOME/PATH are not set in the remote shell.",
         "Install the CUDA toolkit matching torch's CUDA on every node and set CUDA_HOME (in .deepspeed_env for "
         "pdsh launches), or pre-build the ops in the image.", retry=False),
    _sig("op-build-failed", r"Error building extension '[\w.-]+'|ninja: build stopped: subcommand failed|"
         r"^FAILED: \S+\.o\s*$|Command '\['ninja', '-v'\]' returned non-zero exit status|"
         r"torch_extensions/\S+\.so: cannot open shared object file|"
         r"error: command '[^']*(?:gcc|g\+\+|nvcc|c\+\+|x86_64-linux-gnu-gcc)' failed|object has no attribute 'ds_opt_\w+'",
         "A DeepSpeed op failed to compile on a node (the compiler's first error is above that line).",
         "Read the first `error:` of the compile output, fix it (compiler, headers, CUDA toolkit), clear "
         "~/.cache/torch_extensions, or pre-build the ops in the image (DS_BUILD_OPS=1).", retry=False),
    _sig("undefined-symbol", r"undefined symbol: \w+",
         "A compiled extension (a DeepSpeed op in ~/.cache/torch_extensions, flash-attn, apex...) was built against "
         "another torch/CUDA version than the one installed now.",
         "Remove the stale build (~/.cache/torch_extensions or TORCH_EXTENSIONS_DIR) and reinstall the extension "
         "against this torch, with the same image on every node.", retry=False),
    _sig("shared-lib-missing", r"(?:ImportError|OSError): (?:[\w./-]*/)?lib[\w.+-]+\.so[\w.]*: cannot open shared object file",
         "A shared library is missing on that node, or not on its library path (pdsh does not pass LD_LIBRARY_PATH).",
         "Install it on every node (same image), or put LD_LIBRARY_PATH in .deepspeed_env so remote ranks get it.",
         retry=False),
    _sig("version-mismatch",
         r"version mismatch|installed version .* does not match|torch version .* != |"
         r"deepspeed version .* does not match|Installed CUDA version [\d.]+ does not match the version torch was compiled",
         "Nodes run different torch / DeepSpeed / CUDA versions (or an op was built for another version).",
         "Use the same node image everywhere; `dscluster doctor` compares versions across nodes.",
         retry=False),
    _sig("module-not-found", r"No module named '?([\w.]+)'?|Error while finding module specification for",
         "A rank could not import a Python module: it is not installed on that node's python, or the "
         "code directory is not on shared storage (or not the working directory there).",
         "Install it in the node image / venv on every node (same path everywhere), or launch from a "
         "directory on shared storage.", retry=False),
    _sig("import-name", r"ImportError: cannot import name '\w+' from",
         "An installed package does not have what the code imports: a version other than the one the code was "
         "written for.",
         "Install the package version the code expects, the same on every node (pip show PACKAGE on each).",
         retry=False),
    _sig("workdir-missing", r"\bcd: [^:\n]+: No such file or directory|bin/python[\d.]*: No such file or directory|"
         r"bin/python[\d.]*: not found",
         "The working directory or the python of the launching node does not exist on another node: pdsh runs "
         "`cd $PWD` and the same interpreter path on every node.",
         "Launch from a directory on shared storage mounted at the same path on every node, with the same python "
         "path everywhere (same image or venv on shared storage).", retry=False),
    _sig("script-not-found", r"can't open file '([^']+)'|No such file or directory: '([^']+\.py)'",
         "A node could not find the training script at the same path.",
         "Put the script on shared storage so every node sees the same path.", retry=False),
    _sig("syntax-error", r"^\s*(?:SyntaxError|IndentationError|TabError): ",
         "The script does not compile (a syntax error).",
         "Fix the line the error names, then launch again.", retry=False),
    _sig("ds-batch-assert", r"Check batch related parameters|train_batch_size is not equal to micro_batch_per_gpu",
         "DeepSpeed's batch sizes do not add up: train_batch_size must equal train_micro_batch_size_per_gpu x "
         "gradient_accumulation_steps x the number of GPUs (world size).",
         "Set two of the three in ds_config and let DeepSpeed derive the third, or fix the numbers for this world "
         "size.", retry=False),
    _sig("ds-config-invalid", r"DeepSpeedConfigError|validation errors? for DeepSpeed\w*Config|"
         r"Expected a string path to an existing deepspeed config",
         "DeepSpeed rejected its config (a key it does not know, a wrong type, or a file it cannot find).",
         "Fix the key the message names in ds_config.json, then launch again.",
         retry=False),
    _sig("device-mismatch", r"Expected all tensors to be on the same device",
         "The script mixes tensors on different devices (a GPU and the CPU, or two GPUs) in one operation.",
         "Move the model and every input to the rank's device (engine.device, or torch.cuda.set_device(local_rank) "
         "before creating tensors); a restart fails the same way.", retry=False),
    _sig("device-assert", r"device-side assert triggered|block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion",
         "A CUDA kernel's assertion failed: most often an index out of range (a label >= the number of classes, a "
         "token id >= the vocabulary size).",
         "Check the labels / token ids against the model's sizes; run with CUDA_LAUNCH_BLOCKING=1 to see the "
         "operation that failed.", retry=False),
    _sig("invalid-device-ordinal", r"invalid device ordinal",
         "A rank asked for a GPU the node does not have: the hostfile gives that node more slots than it has GPUs, "
         "or CUDA_VISIBLE_DEVICES hides some.",
         "Set slots=N to the node's real GPU count (nvidia-smi -L) in the hostfile.", retry=False),
    _sig("gpu-hardware", r"uncorrectable ECC error|GPU has fallen off the bus|GPU is lost",
         "A GPU failed (an uncorrectable ECC error or the GPU dropped off the bus).",
         "Take that node out of the hostfile and have the GPU checked (nvidia-smi -q, the kernel log's Xid lines); "
         "resume on the others.", retry=False),
    _sig("cuda-oom", r"CUDA out of memory|torch\.OutOfMemoryError|OutOfMemoryError: CUDA",
         "A GPU ran out of memory.",
         "Lower train_micro_batch_size_per_gpu (raise gradient_accumulation_steps to keep the global batch), "
         "use a higher ZeRO stage, enable activation checkpointing, or a shorter sequence.", retry=False),
    _sig("memcg-oom", r"Memory cgroup out of memory|oom[-_]kill event|task \d+: Out Of Memory|\bOOMKilled\b|"
         r"CONSTRAINT_MEMCG|Out of memory: Kill(?:ed)? process",
         "A rank used more host memory than its limit (the container's or the Slurm job's cgroup, or the machine's), "
         "and the kernel killed it.",
         "Give the job more host memory (--mem for Slurm, the container's --memory), or use less: fewer DataLoader "
         "workers, no CPU offload, a smaller model per node. A restart hits the same limit.", retry=False),
    _sig("dev-shm-full", r"No space left on device.*(/dev/shm|shm)|/dev/shm.*No space left|Bus error|"
         r"unable to write to file </torch_|Error while creating shared memory segment|posix_fallocate failed|"
         r"failed to extend /dev/shm|unable to allocate shared memory",
         "/dev/shm is too small or full (NCCL and DataLoader workers use shared memory).",
         "Start the node container with a larger --shm-size (e.g. 16g) or --ipc=host, and remove stale "
         "/dev/shm/deepspeed_* files.", retry=False),
    _sig("stale-extension-lock", r"torch_extensions.*lock|Waiting for lock on .*torch_extensions|"
         r"stale lock file",
         "A DeepSpeed JIT op build was killed mid-compile and left a lock file; every later job waits on it.",
         "Remove the `lock` file under ~/.cache/torch_extensions/<py>/<op>/ (or TORCH_EXTENSIONS_DIR) and "
         "launch again.", retry=False),
    _sig("nccl-ib-memlock", r"Call to ibv_reg_mr failed|ibv_reg_mr.*Cannot allocate memory|NET/IB.*memlock",
         "NCCL could not register memory with the InfiniBand/RoCE adapter: the locked-memory limit (ulimit -l) is "
         "too low, typical in containers.",
         "Raise it: docker run --ulimit memlock=-1 (and --cap-add IPC_LOCK), or `* - memlock unlimited` in "
         "/etc/security/limits.conf.", retry=False),
    _sig("nccl-ib", r"NET/IBP? ?: ?Got completion from peer|NET/IB.*(?:ibv_\w+ failed|local catastrophic error|"
         r"async event)|Call to ibv_\w+ failed|IBV_WC_RETRY_EXC_ERR|NET/IB : .*(?:Unable to|failed)",
         "NCCL's InfiniBand/RoCE transport failed between nodes (a completion error: the adapters cannot reach "
         "each other, a wrong GID index on RoCE, or a link went down).",
         "Run nccl-tests' all_reduce_perf across the nodes with NCCL_DEBUG=INFO; on RoCE set NCCL_IB_GID_INDEX "
         "(often 3), pick the right adapters with NCCL_IB_HCA, check the links (ibstat); NCCL_IB_DISABLE=1 falls "
         "back to TCP to confirm.", retry=False),
    _sig("loopback-address", r"(?:connect|Connect to|failed to connect to|remote=|local=)\s*\[?(?:::ffff:)?127\.0\.[01]\.1\]?|"
         r"Bootstrap : Using lo:|NET/Socket : Using \[0\]lo:",
         "A node announced a loopback address (127.0.x.1) to the others: its host name resolves to 127.0.1.1 in "
         "/etc/hosts, or NCCL/gloo picked the `lo` interface.",
         "Make each node's host name resolve to its training-network IP (fix /etc/hosts), or set "
         "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME to that interface (e.g. eth0) on every node; use IPs in the "
         "hostfile and --master_addr.", retry=False),
    _sig("nccl-no-interface", r"(?:Bootstrap|NET/Socket) ?: no (?:socket )?interface found|"
         r"Unable to find address for: \S+|no socket interface found",
         "NCCL/gloo found no usable network interface: NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME names one that "
         "this node does not have.",
         "Set NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME to the training network's interface as it is named on every "
         "node (ip -br addr), or a prefix every node matches (e.g. eth, ens).", retry=False),
    _sig("address-in-use", r"Address already in use|EADDRINUSE|errno: 98",
         "The rendezvous port (--master_port) on the first node was already taken, often by a leftover "
         "process of an earlier run.", "dscluster picks a fresh port per attempt; if it persists, find the "
         "process holding the port on the first node (`ss -ltnp`) and stop that run."),
    _sig("firewall-blocked", r"(?:errno: ?113|returned 113)\b|(?:Connect to|connect to) \S+ (?:failed|returned)\W*"
         r"(?:No route to host|113)|socketPollConnect: connect returned No route to host",
         "A connection between nodes was rejected on its way (No route to host): a firewall (e.g. firewalld's "
         "REJECT) blocks the rendezvous port or the ports NCCL/gloo open between nodes.",
         "Allow all TCP between the cluster's nodes on the training network (e.g. firewall-cmd --zone=trusted "
         "--add-source=10.0.0.0/24, or ufw allow from that subnet); NCCL and gloo use random ports.", retry=False),
    _sig("master-unreachable", r"client socket has (?:timed out after|failed to connect)|"
         r"failed to connect to any network address|connection to the C10d store has failed|RendezvousConnectionError|"
         r"Timed out after \d+ seconds waiting for clients|timed out .* rendezvous|"
         r"errno: 11[01] - Connection (?:refused|timed out)",
         "Ranks could not reach rank 0's rendezvous store at MASTER_ADDR:MASTER_PORT: a wrong --master_addr "
         "(a name, or an address on another network), a firewall dropping the port, or rank 0 never started.",
         "Use the first hostfile host's training-network IP as --master_addr, open the master port between the "
         "nodes (`dscluster doctor` tests it), and make sure rank 0 runs on that host.", retry=False),
    _sig("nccl-wrong-interface", r"(?:Bootstrap|NET/Socket) : Using (?:.*\[\d+\])?(?:docker\d|virbr\d|br-\w+|veth\w+|cni\d|"
         r"flannel)",
         "NCCL chose a virtual interface (docker0, a bridge) that the other nodes cannot reach.",
         "Set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the training network's interface on every node, "
         "e.g. NCCL_SOCKET_IFNAME=eth0 or ^docker,lo,veth.", retry=False),
    _sig("aborted", r"exits with return code = -6\b|terminate called (?:after throwing|without an active exception)|"
         r"\bAborted \(core dumped\)|\bSIGABRT\b",
         "A rank aborted (SIGABRT) in native code: an uncaught C++ exception or a failed assertion in torch, "
         "NCCL/gloo or an extension. \"terminate called without an active exception\" as a rank exits means "
         "it ended with a communication thread still running.",
         "Read that rank's last lines. If it aborted while exiting after training finished, call "
         "torch.distributed.destroy_process_group() before the script ends."),
    _sig("segfault", r"exits with return code = -11\b|Segmentation fault|\bSIGSEGV\b",
         "A rank crashed in native code (segmentation fault): often mismatched builds of torch, DeepSpeed "
         "ops or CUDA libraries on that node, or a bug in an extension.",
         "Compare versions across nodes (`dscluster doctor`), rebuild the DeepSpeed ops on that node "
         "(clear ~/.cache/torch_extensions), and read that rank's log."),
    _sig("collective-timeout", r"Watchdog caught collective operation timeout|Timed out waiting \d+ms for (?:recv|send) "
         r"operation|failed to pass monitoredBarrier|Some NCCL operations have failed or timed out|"
         r"Work(?:NCCL|Gloo)\(.*Timeout\(ms\)=\d+\) ran for",
         "A collective timed out: {op_text}{missing_text}The waiting ranks gave up; the cause is on the ranks that "
         "never arrived (a hang, a crash, or a rank that took another code path).",
         "Look at what those ranks were doing (dscluster stacks while it hangs, or their logs); make every rank "
         "call the same collectives in the same order. Raise the timeout only if it is just slow.", symptom=True),
    _sig("ssh-255", r"ssh exited with exit code 255|Connection to \S+ closed by remote host",
         "The SSH connection to a node dropped while the run was going (node down or rebooted, sshd stopped, network).",
         "Check the node with `dscluster doctor`; `dscluster node start` restarts its sshd.", symptom=True),
    _sig("nccl-remote-exit", r"NCCL.*remote process exited|remote process exited or there was a network error|"
         r"ncclRemoteError|NCCL error.*unhandled system error",
         "Another rank died (or its network failed) during a collective; the real error is on that rank.",
         "Look at the first failing rank's log.", symptom=True),
    _sig("gloo-peer-closed", r"Connection closed by peer|Connection reset by peer|Broken pipe|"
         r"\[gloo\].*(?:Read error|Connection refused)",
         "A peer rank went away during a collective (it crashed or was killed); this rank failed with it.",
         "Look at the first failing rank's log.", symptom=True),
    # Word boundaries: DeepSpeed's launch.py logs every teardown from its "sigkill_handler", which is not a kill.
    _sig("killed", r"exits with return code = -9\b|\bKilled\b|\bsignal 9\b|\bSIGKILL\b",
         "A rank was killed (SIGKILL): the kernel's OOM killer (host RAM), an operator or a scheduler.",
         "Check host memory (`dmesg | grep -i oom` on the node); lower the batch size or the number of "
         "DataLoader workers. A restart is tried once: an operator's or a scheduler's kill does not come back, the "
         "same kill again without progress stops the run.", symptom=True),
    _sig("python-error", r"^Traceback \(most recent call last\):",
         "A rank raised a Python exception.",
         "Read the traceback in that rank's log.", symptom=True),
)


# Exceptions that the same code and the same input raise again: no restart gets past them.
DETERMINISTIC_TYPES = frozenset({
    "AssertionError", "AttributeError", "FileNotFoundError", "ImportError", "ModuleNotFoundError", "IndentationError",
    "IndexError", "KeyError", "NameError", "NotImplementedError", "SyntaxError", "TabError", "TypeError", "ValueError",
    "ZeroDivisionError", "JSONDecodeError", "UnboundLocalError", "RecursionError", "PermissionError",
    "IsADirectoryError", "NotADirectoryError", "UnicodeDecodeError", "UnicodeEncodeError", "OverflowError",
    "ValidationError", "DeepSpeedConfigError", "HFValidationError", "EnvironmentError", "ArgumentError",
    "ConfigError", "UsageError", "usage error"})  # ConfigError, UsageError: dscluster's own, from dscluster.checkpoint etc.
# Signatures whose evidence may stand in the lines just before a rank's error rather than in it: a compile's
# output before "Error building extension", NCCL's WARN lines before "unhandled system error".
_BEFORE_THE_ERROR = frozenset({
    "ninja-missing", "build-header-missing", "compiler-unsupported", "cuda-home-missing", "op-build-failed",
    "nccl-ib-memlock", "nccl-ib", "dev-shm-full", "loopback-address", "nccl-no-interface", "driver-too-old",
    "firewall-blocked", "cuda-oom", "device-assert", "undefined-symbol", "shared-lib-missing", "nccl-wrong-interface"})
# Facts about a node's environment that any rank's lines may show, behind a vague error on another rank.
_ENVIRONMENT = frozenset({"loopback-address", "firewall-blocked", "nccl-no-interface", "nccl-ib-memlock", "nccl-ib",
                          "dev-shm-full", "memcg-oom", "driver-too-old"})
_VAGUE_TYPES = frozenset({"RuntimeError", "DistBackendError", "OSError", "SystemError", "Exception", "CalledProcessError",
                          "AttributeError", "ImportError", "NCCL WARN"})
_SIGNAL_WHY = {
    "SIGKILL": "often the kernel's out-of-memory killer (host RAM), or an operator",
    "SIGSEGV": "a crash in native code (a CUDA/C++ extension, or a driver)",
    "SIGBUS": "a bus error, often /dev/shm too small",
    "SIGABRT": "an abort in native code (a failed assertion, NCCL/gloo aborting the process)",
    "SIGFPE": "an arithmetic fault in native code",
}


@dataclass(frozen=True)
class Explanation:
    signature: str
    cause: str
    fix: str
    retry: bool  # whether a restart can help
    evidence: str
    params: dict = field(default_factory=dict)  # values for {placeholders} in cause and fix
    error: dict | None = None  # the first failing rank's own error (rankerror.RankError.to_dict())

    @property
    def restart_can_help(self) -> bool:
        return self.retry

    @property
    def error_line(self) -> str | None:
        """`rank 0 on node1: TypeError: ... (train.py:22)`: the failing rank's own words, on one line, in English
        (as records keep it; views show it with `error_line`)."""
        return error_line(self.error, english=True)

    def to_dict(self) -> dict:
        """For run.json: English with the values filled in, like every record. An explanation built from
        a template also keeps the templates and values, so readers show it in their language (`localized`)."""
        d = asdict(self)
        params, error = d.pop("params"), d.pop("error")
        if params:
            d.update(cause=self.cause.format(**params), fix=self.fix.format(**params),
                     templates={"cause": self.cause, "fix": self.fix}, params=params)
        d["restart_can_help"] = self.retry
        if error:
            d["error"] = error
        return d


def no_restart_note(exp: dict) -> str | None:
    """Why the supervisor did not restart after this failure, though restarts were left."""
    why = (exp.get("no_restart") or {}).get("why")
    if why == "cannot-help":
        return tr("not restarted: a restart cannot help with this failure (the same command fails the same way)")
    if why == "same-failure":
        return tr("not restarted: this attempt failed the same way as attempt {n}, with no progress in between "
                  "(no newer checkpoint, no higher step)", n=exp["no_restart"].get("previous", "?"))
    return None


def error_line(error: dict | None, english: bool = False) -> str | None:
    """A recorded error on one line, its rank and node named in the reader's language (or in English)."""
    if not error or not error.get("summary"):
        return None
    rank, node = error.get("rank"), error.get("node")
    if english:
        who = error.get("who")
    elif isinstance(rank, int) and node:
        who = tr("rank {rank} on {node}", rank=rank, node=node)
    elif isinstance(rank, int):
        who = tr("rank {rank}", rank=rank)
    else:
        who = node or error.get("who")
    return f"{who}: {error['summary']}" if who else error["summary"]


def localized(recorded: dict) -> tuple[str, str]:
    """(cause, fix) of a recorded explanation in the reader's language."""
    templates = recorded.get("templates") or {}
    params = {k: str(v) for k, v in (recorded.get("params") or {}).items()}
    if templates and params:
        return tr(templates.get("cause") or "", **params), tr(templates.get("fix") or "", **params)
    # Text recorded filled in (no templates) is looked up as it is, never formatted again.
    return gettext(recorded.get("cause") or ""), gettext(recorded.get("fix") or "")


@dataclass(frozen=True)
class LogText:
    """One log to explain: a rank's own file (rank/node known), a launcher's output, or a pasted log."""
    text: str
    node: str | None = None
    rank: int | None = None
    time: float | None = None  # when it was last written (a file's mtime): orders errors without time stamps
    name: str = ""


def explain(text: str) -> Explanation | None:
    """The explanation of one log text (which may hold many ranks' lines, with prefixes)."""
    return explain_logs([LogText(text)])


def _line_at(text: str, match: re.Match) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:end if end >= 0 else len(text)].strip()[:300]


_VAGUE_MESSAGE = re.compile(r"NCCL|gloo|unhandled system error|invalid usage|internal error", re.IGNORECASE)


def _vague(err: rankerror.RankError) -> bool:
    """An error that says something failed without saying why (a communication library's error, a failed
    build): the lines before it, or the environment, may say why."""
    short = err.type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    return short in _VAGUE_TYPES or short.endswith("RuntimeError") or err.kind != "python" or \
        bool(_VAGUE_MESSAGE.search(err.message))


def _own_signature(err: rankerror.RankError,
                   streams: list[rankerror.Stream]) -> tuple[Signature, re.Match, str] | None:
    """The first non-symptom signature in the rank's own error. For a vague error (RuntimeError: Error
    building extension, DistBackendError: unhandled system error) a more specific one may stand in the
    lines just before it (the compiler's error, NCCL's WARN line), or, for facts about the environment
    (a loopback address, a firewall, /dev/shm), in any rank's lines."""
    order = {s.name: i for i, s in enumerate(SIGNATURES)}
    best = None
    for sig in SIGNATURES:
        m = None if sig.symptom else sig.pattern.search(err.block)
        if m:
            best = (sig, m, err.block)
            break
    if not _vague(err):
        return best
    limit = order[best[0].name] if best else len(SIGNATURES)
    for sig in SIGNATURES[:limit]:
        if sig.name in _BEFORE_THE_ERROR:
            m = sig.pattern.search(err.context)
            if m:
                return sig, m, err.context
    if best:
        return best
    for sig in SIGNATURES:
        if sig.name in _ENVIRONMENT:
            for st in streams:
                m = sig.pattern.search(st.text)
                if m:
                    return sig, m, st.text
    return None


def _from_signature(sig: Signature, m: re.Match, text: str, err: rankerror.RankError | None,
                    streams: list[rankerror.Stream]) -> Explanation:
    if sig.name == "program-error":
        # The program's own words are the explanation: the message and its fix line.
        msg, fix = m.group("msg").strip(), (m.group("fix") or "").strip()
        return Explanation(sig.name, msg[:300], fix[:300] or sig.fix, False, m.group(0).strip()[:300],
                           error=err.to_dict() if err else None)
    params = collective_params(streams) if sig.name == "collective-timeout" else {}
    return Explanation(sig.name, sig.cause, sig.fix, sig.retry, _line_at(text, m), params,
                       err.to_dict() if err else None)


def _who(err: rankerror.RankError) -> str:
    if err.rank is not None and err.node:
        return f"rank {err.rank} ({err.node})"
    if err.rank is not None:
        return f"rank {err.rank}"
    return err.node or "a rank"


def own_error(err: rankerror.RankError) -> Explanation:
    """A rank's own error that no signature knows: its words are the explanation."""
    short = err.type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    who = _who(err)
    evidence = err.summary[:300]
    if err.kind == "signal":
        return Explanation("rank-crash", "{who} was killed by {sig} with no error of its own: {why}.",
                           "Read the end of that rank's log and the node's kernel log (dmesg -T); an OOM kill names "
                           "the process and its memory.", err.type != "SIGKILL", evidence,
                           {"who": who, "sig": err.type, "why": _SIGNAL_WHY.get(err.type, "a signal from outside")},
                           err.to_dict())
    if err.kind == "nccl":
        return Explanation("nccl-error", "{who} reported an NCCL error; the collective failed there first.",
                           "Read NCCL's WARN lines of that rank (run with NCCL_DEBUG=INFO for more); run an all-reduce "
                           "test across the nodes (`dscluster doctor --collective`).", True, evidence,
                           {"who": who}, err.to_dict())
    if err.kind == "native":
        return Explanation("native-error", "{who} stopped on an uncaught C++ exception ({type}); the other ranks "
                           "stopped because of it.", "Read its what() line above; it names the operation that failed.",
                           True, evidence, {"who": who, "type": err.type}, err.to_dict())
    deterministic = short in DETERMINISTIC_TYPES
    if err.where:
        cause = "{who} raised {type} at {where}; the other ranks stopped because of it."
    else:
        cause = "{who} raised {type}; the other ranks stopped because of it."
    fix = ("Fix what the error names, then launch again: the same code and input raise it again, so a restart "
           "cannot help." if deterministic else
           "Read that rank's traceback for what failed; a restart helps only if it was transient.")
    return Explanation("python-error", cause, fix, not deterministic, evidence,
                       {"who": who, "type": short, "where": err.where or ""}, err.to_dict())


_WORK = re.compile(r"Work(?:NCCL|Gloo)\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)")
_RANK_OF = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]")
_RECV = re.compile(r"Timed out waiting \d+ms for (?P<op>recv|send) operation")
_MONITORED = re.compile(r"Ranks? (?P<ranks>[\d, ]+) failed to pass monitoredBarrier")


def collective_params(streams: list[rankerror.Stream]) -> dict:
    """Which collective timed out and which ranks never arrived, where the logs say so: NCCL's watchdog names
    the operation and its sequence number on each waiting rank; a rank that reports an earlier sequence number,
    or none, among the ranks seen, did not reach it."""
    waiting: dict[int, int] = {}
    ops: dict[int, str] = {}
    seen: set[int] = set()
    missing: set[int] = set()
    for st in streams:
        if st.rank is not None:
            seen.add(st.rank)
        for line in st.lines:
            m = _WORK.search(line)
            if m and "timeout" in line.lower():
                r = _RANK_OF.search(line)
                rank = int(r.group("rank")) if r else st.rank
                seq = int(m.group("seq") or 0)
                ops[seq] = m.group("op").lower()
                if rank is not None:
                    seen.add(rank)
                    waiting[rank] = max(seq, waiting.get(rank, -1))
                continue
            m = _RECV.search(line)
            if m:
                ops.setdefault(-1, m.group("op"))
            m = _MONITORED.search(line)
            if m:
                missing |= {int(x) for x in re.findall(r"\d+", m.group("ranks"))}
    op_text = missing_text = ""
    if ops:
        top = max(ops)
        op_text = f"{ops[top]}" + (f" (sequence number {top})" if top > 0 else "") + ". "
        if waiting:
            missing |= {r for r in seen if waiting.get(r, -1) < top}
    if missing:
        missing_text = "Ranks that never arrived: " + ", ".join(str(r) for r in sorted(missing)) + ". "
    return {"op_text": op_text, "missing_text": missing_text}


def explain_logs(logs: Sequence[LogText], hint_rank: int | None = None) -> Explanation | None:
    """Explain several logs of one failure together. The first failing rank's own error (a Python
    exception, a C++ exception's what(), a usage error) is the answer when a rank has one: a signature
    that knows it names the cause and fix, else its own words do. Only when no rank has an error of its
    own (a kill, a hang, a node lost) does the table speak over every line, roots before symptoms."""
    streams: list[rankerror.Stream] = []
    for i, log in enumerate(logs):
        streams += rankerror.streams(log.text, log.node, log.rank, log.time, order=i)
    errs = [e for st in streams for e in rankerror.errors(st)]
    errs += [e for st in streams for e in rankerror.launcher_exits(st)]
    first = rankerror.first_failure(errs, hint_rank)
    if first is not None and not first.symptom and first.kind in ("python", "native", "usage"):
        own = _own_signature(first, streams)
        if own:
            return _from_signature(own[0], own[1], own[2], first, streams)
        return own_error(first)
    # No rank's own words: the table over every stream, earliest first.
    when = {}
    for e in errs:
        key = (e.node, e.rank)
        t = e.time if e.time is not None else float("inf")
        when[key] = min(when.get(key, t), t)
    ordered = sorted(streams, key=lambda st: (when.get((st.node, st.rank), st.time if st.time is not None
                                                       else float("inf")), st.order))
    signal_first = first is not None and first.kind == "signal" and not first.symptom
    for sig in SIGNATURES:
        if sig.symptom and signal_first:
            # Roots first (an OOM kill's own line); then the signal that ended the first rank, before what
            # the other ranks saw of its death (a peer that closed the connection, a collective timeout).
            signal_first = False
            for s2 in SIGNATURES:
                m = s2.pattern.search(first.context) if s2.symptom else None
                if m:
                    return _from_signature(s2, m, first.context, first, streams)
        for st in ordered:
            m = sig.pattern.search(st.text)
            if m:
                err = first
                if err is None or (err.node, err.rank) != (st.node, st.rank):
                    err = next((e for e in errs if (e.node, e.rank) == (st.node, st.rank)), first)
                return _from_signature(sig, m, st.text, err, streams)
    return own_error(first) if first is not None else None


def read_tail(path: Path, tail_bytes: int = 64_000, upto: int | None = None, since: int = 0) -> str | None:
    """The last `tail_bytes` of a log file (from byte `since`, up to byte `upto`), opened by fsutil's
    no-symlink rule: rank logs are the node user's files, and the evidence lands in run.json."""
    try:
        with os.fdopen(fsutil.open_file(path), "rb") as f:
            f.seek(0, 2)
            end = f.tell() if upto is None else min(f.tell(), upto)
            start = max(0, end - tail_bytes, since)
            f.seek(start)
            return f.read(max(0, end - start)).decode("utf-8", "replace")
    except OSError:
        return None


_RANK_FILE = re.compile(r"_rank(\d+)\.log$")


def rank_of_file(name: str) -> int | None:
    """The rank of a DeepSpeed per-rank log (`*_rank{N}.log`, --enable_each_rank_log), else None."""
    m = _RANK_FILE.search(name)
    return int(m.group(1)) if m else None


def explain_files(paths: Iterable[Path], tail_bytes: int = 64_000,
                  upto: dict[Path, int] | None = None, since: dict[Path, int] | None = None,
                  nodes: dict[int, str] | None = None, hint_rank: int | None = None) -> Explanation | None:
    """Explain the tails of several log files together (explain_logs). A file named like DeepSpeed's
    `*_rank{N}.log` is rank N's own (on `nodes[N]` when given); its mtime orders it against the others.
    `upto` caps a file at a byte offset, e.g. where it stood when the failure was detected, so the
    teardown's own noise (SIGTERM/SIGKILL messages) is never taken for the cause; `since` starts a file at
    one, e.g. where it stood when this attempt began, so an earlier attempt's ending is never taken for
    this one's."""
    logs = []
    for path in paths:
        text = read_tail(path, tail_bytes, (upto or {}).get(path), (since or {}).get(path, 0))
        if text is None:
            continue
        rank = rank_of_file(path.name)
        try:
            mtime = path.stat().st_mtime if rank is not None else None
        except OSError:
            mtime = None
        logs.append(LogText(text, (nodes or {}).get(rank) if rank is not None else None, rank, mtime, path.name))
    return explain_logs(logs, hint_rank) if logs else None


GENERIC = frozenset(s.name for s in SIGNATURES if s.symptom)  # symptoms more than causes
# What the surviving ranks may print when a node vanishes or a rank is killed: on their own (no rank's own
# error behind them) they do not outweigh what the supervisor saw happen.
NETWORK = frozenset({"firewall-blocked", "master-unreachable", "loopback-address", "nccl-ib", "nccl-no-interface",
                     "nccl-wrong-interface", "ssh-unreachable", "address-in-use", "nccl-error", "native-error",
                     "rank-crash"})


def rooted(exp: Explanation | None) -> bool:
    """Whether an explanation rests on a rank's own error (a Python exception, a C++ exception's what(), a
    usage error), not only on lines any rank may print."""
    err = (exp.error or {}) if exp is not None else {}
    return bool(err) and not err.get("symptom") and err.get("kind") in ("python", "native", "usage")


def custom(signature: str, cause: str, fix: str, evidence: str = "", retry: bool = True, **params) -> Explanation:
    """An explanation the supervisor derives itself (node lost, stall), not from log text. `cause` and `fix`
    are catalog templates; `params` fill their {placeholders} when shown (so they translate)."""
    return Explanation(signature, cause, fix, retry, evidence, dict(params))

"""The failure signatures: text found in a run's logs -> what went wrong, how to fix it, and whether a
restart can help. The table is ordered: root causes before the symptoms they trigger on other ranks
(a CUDA OOM before "NCCL remote process exited"); `symptom=True` marks what other ranks see when one
fails. explain.py matches logs against it. Causes and fixes are English templates; the zh-TW catalog
translates them (tests/unit/test_runs_catalog.py); the C library's error texts in any language: strerror.py."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster import sigcauses, sigwords
from dscluster.launcher import backends
from dscluster.sigloss import LOSS_AFTER_MESSAGES
from dscluster.sigmessages import BEFORE_VAGUE, MESSAGE_SIGNATURES, NOT_FOUND, NOT_INSTALLED, OTHER_VERSION, with_store
from dscluster.sigmodule import MODULE_AFTER_MESSAGES
from dscluster.sigrounds import ROUND_SIGNATURES
from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.strerror import EDQUOT, ENOSPC

__all__ = ["SIGNATURES", "Signature", "then"]


# dscluster's own verdict on its input, in the exact form its entry points print a DsclusterError (cli.main):
# a line "error: MESSAGE" (nothing before the word but "[rank N] ", or `dscluster logs`' "[node N] " (round 161)),
# then maybe "  fix: HINT"; the words may be the zh-TW ones. Behind pdsh's "node: " prefix (one not already cut off as a stream's) only with its fix
# line under the same prefix. Never "PROG: error: ..." — argparse's, Slurm's "srun: error: NODE: task N", nor
# setuptools' `error: command 'nvcc' failed with exit status 1` or pip's `error: subprocess-exited-with-error`
# (their cause is the compiler's error above). Case-sensitive: libraries' "ERROR:" lines are not this.
_BUILD_TOOL_ERROR = (r"(?!command '[^'\n]*' failed with exit (?:status|code) -?\d|subprocess-exited-with-error|"
                     r"legacy-install-failure|metadata-generation-failed|failed-wheel-build-for-install)")
_PROGRAM_ERROR = re.compile(
    r"^(?:\[[\w.@-]+ \d+\] )?(?:error|錯誤): " + _BUILD_TOOL_ERROR + r"(?P<msg>\S.*)$"
    r"(?:\n(?:\[[\w.@-]+ \d+\] )?  (?:fix|解法): (?P<fix>.+)$)?|"
    r"^(?P<host>[\w.@-]+): (?:\[rank \d+\] )?(?:error|錯誤): " + _BUILD_TOOL_ERROR + r"(?P<hmsg>\S.*)$"
    r"\n(?P=host): (?:\[rank \d+\] )?  (?:fix|解法): (?P<hfix>.+)$", re.MULTILINE)
# Exit codes of a DsclusterError that the same input reproduces: usage, config/data, permission.
DETERMINISTIC_EXIT_CODES = frozenset({2, 3, 6})

_JIT_BUILD = re.compile(sigwords.JIT_BUILD_BEGUN, re.IGNORECASE)


def _waits_on_a_build(m: re.Match, texts: Iterable[str]) -> bool:
    """stale-extension-lock's Signature.aside_if: a wait on torch's JIT lock (sigwords.TORCH_JIT_WAIT, its group ev)
    where a stream of the same failure shows the build under way (another node's ranks on a shared home directory while
    the first node compiles; rank 0's compile beside the others' Ctrl-C tracebacks): a wait for that build, no lock
    left behind."""
    return m.group("ev") is not None and sigwords.found_in_any(_JIT_BUILD, texts)

# Ordered: first match wins. Root causes come before the symptoms they cause on other ranks. `retry` is
# whether a restart of the same command can help (restart_can_help): a missing module, a config the
# launcher rejects or a host that is down fail the same way again. `symptom`: what the other ranks see
# when one rank dies; never the answer while a rank has its own error.
_TABLE: tuple[Signature, ...] = (
    # Before the program's own verdict: a full disk is the root cause of the errors it triggers (an
    # incomplete checkpoint, a failed write). Not /dev/shm's (that line mentions shm): dev-shm-full below.
    _sig("disk-full", sigwords.NOT_A_DISK + r".*(?:" + ENOSPC + "|" + EDQUOT + r"|\[Errno 28\]|\bENOSPC\b|"
         r"PytorchStreamWriter failed writing file)",
         "A disk the run writes to is full (no space left on device).",
         "Free space on that disk, keep fewer checkpoints (the trainer's --keep N), or put checkpoints on "
         "another disk (--save-dir); then `dscluster restart` of the run resumes from the newest committed checkpoint.",
         retry=False),
    # PyTorch's writers do not pass ENOSPC on (sigwords.WRITE_FAILED: the C++ stream, the zip writer, torch's
    # write() with the kernel's error). The supervisor then looks at the disk itself
    # (runs/preparing/diskspace.py) and says "disk full" with the figures.
    _sig("write-failed", sigwords.WRITE_FAILED,
         "A rank failed writing a file (the writer reports only that the write failed): most often the "
         "disk is full or over its quota, else a network file system that went away or a failing disk.",
         "Check the free space where the run writes checkpoints (`df -h` on that directory, on every node for "
         "node-local paths); free space, keep fewer checkpoints (--keep N) or put them on another disk (--save-dir).",
         retry=False),
    _sig("local-rank-arg", then("error: unrecognized arguments:", "--local[_-]rank"),
         "The script's argument parser does not accept --local_rank=N (--local-rank=N from torch's launchers), which "
         "the launcher passes to every rank.",
         "Launch with --no_local_rank (the rank is in the LOCAL_RANK environment variable), or accept it in the "
         "script: parser.add_argument(\"--local_rank\", \"--local-rank\", type=int, default=-1).", retry=False),
    # A script's argparse error: its usage line and "PROG: error: ", or "SCRIPT.py: error: " whose usage line
    # the log no longer holds.
    _sig("argparse-usage", r"^usage: (\S+)(?!\S).*\n(?:.*\n){0,40}?\1: error: |^[\w.-]+\.py: error: ",
         "The script rejected its command-line arguments (its usage line and error are above).",
         "Correct the script's arguments after the script name, then launch again: a restart would fail the same way.",
         retry=False),
    Signature("program-error", _PROGRAM_ERROR,
              "The program rejected its input (its own error message is above).",
              "Fix the setting the message names, then launch again: a restart would fail the same way.",
              retry=False),
    # An exit code means what dscluster's own training program (named on the launcher's line) gives it; any other
    # program's 2 is whatever it chose (bash's "no such file", Slurm's failed execve), never a usage error.
    _sig("input-error-exit", then(r"dscluster\.train\b", r"exits with return code = (?:2|3|6)\b"),
         "dscluster's training program exited with its config/data (3), usage (2) or permission (6) error code: "
         "the same input fails the same way again.",
         "Read the first failing rank's log, fix the input, launch again.", retry=False),
    _sig("ssh-publickey", sigwords.SSH_KEY_REFUSED,
         "A node refused the cluster's SSH key.",
         "Install the cluster key on every node (`dscluster node start` does it), then run `dscluster doctor`.",
         retry=False),
    _sig("ssh-host-key", sigwords.SSH_HOST_KEY,
         "A node's SSH host key is not in the cluster's pinned known_hosts (new or reinstalled node).",
         "Re-publish the node's host key (`dscluster node start` on it), then `dscluster doctor`; "
         "never turn StrictHostKeyChecking off.", retry=False),
    _sig("hostfile-syntax", r"Hostfile contains (?:a bad entry|multiple entries)|Hostfile is empty or not formatted correctly",
         "DeepSpeed could not read the hostfile: each line must be `HOST slots=N`, each host once, no other words.",
         "Fix the hostfile line the message names (e.g. `10.0.0.2 slots=8`), then launch again.", retry=False),
    _sig("ds-include", r"Hostname '[^']*' not found in hostfile|No slot '?[^'\s]*'? specif\w* on host|"
         r"include_str and exclude_str are mutually exclusive|Cannot specify num_nodes/gpus with include/exclude|"
         r"Num nodes is >1 but no extra nodes available via hostfile|requires same number of devices per node",
         "DeepSpeed's launcher rejected the node/GPU selection: --include/--exclude (or the --include=localhost:... it "
         "makes of CUDA_VISIBLE_DEVICES) name a host or slot the hostfile or the GPUs it counted lack, or the backend "
         "cannot select them.", "Use host names as in the hostfile and slots below its slots=N (--include node1:0,1), "
         "the same slots on every host for MPI launchers, no --num_nodes/--num_gpus with --include; or unset "
         "CUDA_VISIBLE_DEVICES and choose the GPUs with --include localhost:0,2.", retry=False),
    _sig("ssh-unreachable", r"was not reachable via ssh|" + sigwords.SSH_UNREACHABLE,
         *sigcauses.SSH_UNREACHABLE, retry=False),
    _sig("launcher-missing", r"launcher '\w+' not installed|(?<![\w.-])(?:" + (_LAUNCHERS := backends.tools_pattern()) + r"|prterun|deepspeed|ds_report|"
         r"torchrun|accelerate|horovodrun)" + NOT_FOUND + r"|No such file or directory: '(?:" + _LAUNCHERS + r")'|"
         r"execve\(\): (?:\S*/)?(?:" + _LAUNCHERS + r"|prterun|deepspeed|torchrun|accelerate|horovodrun|python3?): No such file",
         "The launcher (deepspeed, torchrun, accelerate, or the multi-node launcher DeepSpeed was told to use: pdsh, "
         "an MPI launcher, a scheduler's) is not installed on this node, or not on the PATH of the shell that runs it.",
         "Install it in the node image on every node (pip install deepspeed; Debian: apt-get install pdsh, or the "
         "MPI launcher's package) with its bin directory on the PATH (pip --user installs into ~/.local/bin), or "
         "pick the launcher that is installed with --launcher.", retry=False),
    _sig("mpi-as-root", r"\b\w+ has detected an attempt to run as root",
         "Open MPI refuses to run as root unless told to.",
         "Run as a normal user, or pass --allow-run-as-root to the MPI launcher (DeepSpeed: --launcher_args "
         "\"--allow-run-as-root\").", retry=False),
    # Open MPI's help-orte-rmaps-base.txt / PRRTE's [orte-rmaps-base:alloc-error]; a paste may lose its first letter.
    _sig("mpi-slots", r"(?:\bT|\b)here are not enough slots available in the system",
         "The MPI launcher was asked for more processes than the hosts offer slots.",
         "Give each host its real GPU count as slots=N in the hostfile, or ask for fewer processes.", retry=False),
    _sig("mpi-daemons", r"(?:ORTE|PRTE|PMIx) (?:was unable to reliably start|has lost communication with)|"
         r"An ORTE daemon has unexpectedly failed|ORTE does not know how to route a message|(?:orted|prted): (?:command )?not found|"
         + then(r"\b(?:prted|orted)\b", "exited|failed to start") + r"|MPI environment variables are not set",
         "The MPI launcher could not start or keep its daemon on a remote node: the node's ssh, its PATH (orted/prted "
         "not found there), a different MPI version on that node, or a firewall between the nodes.",
         "Check that `ssh NODE which orted` works from the first node, that every node has the same MPI install, and "
         "that the nodes reach each other on all TCP ports (or set btl_tcp_if_include / oob_tcp_if_include to the "
         "training network).", retry=False),
    _sig("cuda-arch-list", sigwords.CUDA_ARCH_SUFFIX,
         "TORCH_CUDA_ARCH_LIST contains an arch with a suffix (e.g. '9.0a') that this DeepSpeed op builder "
         "cannot parse.", "Set TORCH_CUDA_ARCH_LIST without the suffix (e.g. --env TORCH_CUDA_ARCH_LIST=9.0) "
         "or unset it.", retry=False),
    _sig("driver-too-old", r"NVIDIA driver on your system is too old|"  # CUDA's error 35: driver-insufficient
         r"forward compatibility was attempted on non supported HW|"
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
         r"C\+\+\d+ or later compatible compiler is required|" + sigwords.COMPILER_TOO_OLD + "|"
         # nvcc's own refusal of the language standard the build asks for (-std=c++17 needs CUDA 11, -std CUDA 7)
         r"nvcc fatal\s*:\s*(?:Value '[^'\n]{1,20}' is not defined for option 'std'|Unknown option '-{0,2}std')",
         "The C++ compiler on the node is too old (or too new for nvcc), or the CUDA toolkit's nvcc is too old for the "
         "C++ standard the build asks for, to build the DeepSpeed/torch op.",
         "Install a gcc/g++ that this CUDA and torch support (point CC/CXX at it), or a CUDA toolkit new enough for the "
         "build (C++17 needs CUDA 11 or newer; CUDA_HOME pointing at it), or pre-build the ops in the image; then clear "
         "~/.cache/torch_extensions.", retry=False),
    _sig("cuda-home-missing", r"CUDA_HOME does not exist|MissingCUDAException|CUDA_HOME environment variable is not set|"
         r"nvcc: (?:command )?not found|No such file or directory: '[^']*/bin/nvcc'",
         "A DeepSpeed op needs the CUDA compiler (nvcc) and it was not found on that node: no CUDA toolkit, or "
         "CUDA_HOME/PATH are not set in the remote shell.",
         "Install the CUDA toolkit matching torch's CUDA on every node and set CUDA_HOME (in .deepspeed_env for "
         "pdsh launches), or pre-build the ops in the image.", retry=False),
    _sig("version-mismatch",
         sigwords.VERSION_WORDS + "|" + then("installed version ", " does not match") + "|" + then("torch version ", " != ")
         + "|" + then("deepspeed version ", " does not match") + r"|Installed CUDA version [\d.]+ does not match the version torch was compiled"
         # torch.utils.cpp_extension's own words when an extension is built with another CUDA toolkit than torch's
         r"|The detected CUDA version \([\d.]+\) mismatches the version that was used",
         *sigcauses.VERSION_MISMATCH,
         retry=False),
    _sig("op-build-failed", r"Error building extension '[\w.-]+'|ninja: build stopped: subcommand failed|"
         r"^FAILED: \S+\.o\s*$|Command '\['ninja', '-v'\]' returned non-zero exit status|"
         + then("torch_extensions/", r"\.so: cannot open shared(?: object file|$)", r"\S") + "|" +
         r"error: command '[^']*(?:gcc|g\+\+|nvcc|c\+\+|x86_64-linux-gnu-gcc)' failed|object has no attribute 'ds_opt_\w+'",
         "A C++/CUDA extension (a DeepSpeed op, or your own built with torch.utils.cpp_extension) failed to compile.",
         "Read the first `error:` of the compile output, fix it (compiler, headers, CUDA toolkit), clear "
         "~/.cache/torch_extensions, or pre-build the ops in the image (DS_BUILD_OPS=1).", retry=False),
    _sig("undefined-symbol", sigwords.UNDEFINED_SYMBOL,
         "A compiled extension (a DeepSpeed op in ~/.cache/torch_extensions, flash-attn, apex...) was built against "
         "another torch/CUDA version than the one installed now; for your own, a function declared but not built.",
         "Remove the stale build (~/.cache/torch_extensions or TORCH_EXTENSIONS_DIR) and reinstall the extension "
         "against this torch, the same image on every node; your own: build every source defining it.", retry=False),
    _sig("shared-lib-missing", r"(?:ImportError|OSError): (?:[\w./-]*/)?lib[\w.+-]+\.so[\w.]*: cannot open shared object file",
         "A shared library is missing on that node, or not on its library path (pdsh does not pass LD_LIBRARY_PATH).",
         "Install it on every node (same image), or put LD_LIBRARY_PATH in .deepspeed_env so remote ranks get it.",
         retry=False),
    _sig("module-not-found", NOT_INSTALLED,
         "A rank could not import a Python module: it is not installed on that node's python, or the "
         "code directory is not on shared storage (or not the working directory there).",
         "Install it in the node image / venv on every node (same path everywhere), or launch from a "
         "directory on shared storage.", retry=False),
    _sig("import-name", OTHER_VERSION,
         "An installed package does not have what the code imports: a version other than the one the code was "
         "written for.",
         "Install the package version the code expects, the same on every node (pip show PACKAGE on each).",
         retry=False),
    _sig("workdir-missing", sigwords.REMOTE_CD + r"|bin/python[\d.]*: No such file or directory|"
         r"bin/python[\d.]*: not found",
         "The working directory or the python of the launching node does not exist on another node: pdsh runs "
         "`cd $PWD` and the same interpreter path on every node.",
         "Launch from a directory on shared storage mounted at the same path on every node, with the same python "
         "path everywhere (same image or venv on shared storage).", retry=False),
    _sig("script-not-found", sigwords.SCRIPT_MISSING,  # Python's words, a launcher's exec of the script, an MPI launcher's
         "A node could not find the training script at the same path.",
         "Put the script on shared storage so every node sees the same path.", retry=False),
    _sig("syntax-error", sigwords.SYNTAX_ERROR,
         "The script does not compile (a syntax error).",
         "Fix the line the error names, then launch again.", retry=False),
    _sig("ds-batch-assert", r"Check batch related parameters|train_batch_size is not equal to micro_batch_per_gpu",
         "DeepSpeed's batch sizes do not add up: train_batch_size must equal train_micro_batch_size_per_gpu x "
         "gradient_accumulation_steps x the number of GPUs (world size).",
         "Set two of the three in ds_config and let DeepSpeed derive the third, or fix the numbers for this world "
         "size.", retry=False),
    _sig("ds-config-invalid", r"DeepSpeedConfigError|validation errors? for DeepSpeed\w*Config|"
         r"Expected a string path to an existing deepspeed config|ZeRO Offload can only work with DeepSpeed optimizers|"
         + sigwords.DS_CONFIG_CLASHES + "|"
         r"we were given deepspeed configs in the deepspeed arguments and deepspeed|"
         # DeepSpeed's engine (_configure_optimizer, since deepspeedai/DeepSpeed#2971): ZeRO-Offload with an optimizer other
         # than its CPU Adam
         r"You are using ZeRO-Offload with a client provided optimizer",
         *sigcauses.DS_CONFIG_INVALID, retry=False),
    _sig("device-mismatch", r"Expected all tensors to be on the same device",
         *sigcauses.DEVICE_MISMATCH, retry=False),
    _sig("device-assert", r"device-side assert triggered|block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion",
         "A CUDA kernel's assertion failed: most often an index out of range (a label >= the number of classes, a "
         "token id >= the vocabulary size).",
         "Check the labels / token ids against the model's sizes; run with CUDA_LAUNCH_BLOCKING=1 to see the "
         "operation that failed.", retry=False),
    _sig("invalid-device-ordinal", r"invalid device ordinal",
         *sigcauses.INVALID_DEVICE_ORDINAL, retry=False),
    # + CUDA's cudaErrorNvlinkUncorrectable (its string), the driver's Xid 48 text and nv.c's probe line for a lost GPU
    _sig("gpu-hardware", r"uncorrectable ECC error|GPU has fallen off the bus|GPU is lost|uncorrectable NVLink error "
         r"detected|cudaErrorNvlinkUncorrectable|CUDA_ERROR_NVLINK_UNCORRECTABLE|uncorrectable double bit error "
         r"\(DBE\) has been detected|fallen off the bus and is not responding to commands",
         "A GPU failed (an uncorrectable ECC or NVLink error, or the GPU dropped off the bus).",
         "Take that node out of the hostfile and have the GPU checked (nvidia-smi -q, the kernel log's Xid lines); "
         "resume on the others.", retry=False),
    _sig("cuda-oom", r"CUDA out of memory|torch\.OutOfMemoryError|OutOfMemoryError: CUDA",
         *sigcauses.CUDA_OOM, retry=False),
    _sig("memcg-oom", r"Memory cgroup out of memory|oom[-_]kill event|task \d+: Out Of Memory|\bOOMKilled\b|"
         r"CONSTRAINT_MEMCG|Out of memory: Kill(?:ed)? process",
         "A rank used more host memory than its limit (the container's or the batch job's cgroup, or the machine's), "
         "and the kernel killed it.",
         "Give the job more host memory (the batch job's --mem, the container's --memory), or use less: fewer DataLoader "
         "workers, no CPU offload, a smaller model per node. A restart hits the same limit.", retry=False),
    _sig("dev-shm-full", then("No space left on device", "shm") + "|" + then("/dev/shm", "No space left") + r"|Bus error|"
         r"unable to write to file </torch_|Error while creating shared memory segment|posix_fallocate failed|"
         r"failed to extend /dev/shm|unable to allocate shared memory|out of shared\s+memory|" + sigwords.SHM_INSUFFICIENT +
         "|" + sigwords.launcher_signal(7),
         "/dev/shm is too small or full (NCCL and DataLoader workers use shared memory).",
         "Start the node container with a larger --shm-size (e.g. 16g) or --ipc=host, and remove stale "
         "/dev/shm/deepspeed_* files.", retry=False),
    # Not "stale lock file" alone (review 89): every tool with a lock file says it of its own (Mercurial's lock.py
    # "removed the stale lock file", a JS build's or an installer's advice); torch's JIT lock is named by its folder.
    _sig("stale-extension-lock", then("torch_extensions", "lock") + "|" + then("Waiting for lock on ", "torch_extensions") + "|"
         + sigwords.TORCH_JIT_WAIT,
         "A DeepSpeed JIT op build was killed mid-compile and left a lock file; every later job waits on it.",
         "Remove the `lock` file under ~/.cache/torch_extensions/<py>/<op>/ (or TORCH_EXTENSIONS_DIR) and "
         "launch again.", retry=False, aside_if=_waits_on_a_build),
    _sig("nccl-ib-memlock", r"Call to ibv_reg_mr failed|RLIMIT_MEMLOCK|" + then(r"\bibv_(?:reg_mr|create_|alloc_)",
         "Cannot allocate memory") + "|" + then("NET/IB", "memlock"),  # any verbs object: NCCL's, UCX's, MPI's
         "NCCL (or UCX/MPI) could not lock memory for the InfiniBand/RoCE adapter: the locked-memory limit (ulimit -l) "
         "is too low, or the container lacks IPC_LOCK.",
         "Raise it: docker run --ulimit memlock=-1 (and --cap-add IPC_LOCK), or `* - memlock unlimited` in /etc/security/limits.conf.", retry=False),
    _sig("nccl-ib", r"NET/IBP?\s*:?\s*Got completion\b|" + then("NET/IB", r"ibv_\w+ failed|local catastrophic error|"
         + sigwords.NCCL_IB_ASYNC_FAILURE)
         + r"|Call to ibv_\w+ failed|IBV_WC_RETRY_EXC_ERR|" + then("NET/IB : ", "Unable to|failed"),
         # Review 157: MTU (nccl-1524: two ports' MTUs differ; NCCL >= 2.20 no longer lowers it to the smaller one)
         "NCCL's InfiniBand/RoCE transport failed between nodes (a completion error: the adapters cannot reach "
         "each other, a wrong GID index on RoCE, the two ends' ports set to different MTUs, or a link went down).",
         "Run nccl-tests' all_reduce_perf across the nodes with NCCL_DEBUG=INFO; on RoCE set NCCL_IB_GID_INDEX "
         "(often 3), pick the right adapters with NCCL_IB_HCA, check the links (ibstat) and that every node's ports "
         "have the same MTU (ibv_devinfo's active_mtu); NCCL_IB_DISABLE=1 falls back to TCP to confirm.", retry=False),
    _sig("loopback-address", sigwords.LOOPBACK + r"|Bootstrap : Using lo:|NET/Socket : Using \[0\]lo:",
         "A node announced a loopback address (127.0.x.1) to the others: its host name resolves to 127.0.1.1 in "
         "/etc/hosts, or NCCL/gloo picked the `lo` interface.",
         "Make each node's host name resolve to its training-network IP (fix /etc/hosts), or set "
         "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME to that interface (e.g. eth0) on every node; use IPs in the "
         "hostfile and --master_addr.", retry=False),
    _sig("nccl-no-interface", r"(?:Bootstrap|NET/Socket) ?: no (?:socket )?interface found|"
         r"Unable to find address for: \S+|no socket interface found|is neither AF_INET\(2\) nor AF_INET6|Socket creation failed : Address family not supported",
         *sigcauses.NCCL_NO_INTERFACE, retry=False),
    _sig("address-in-use", sigwords.ADDRESS_IN_USE,  # torch's c10d's and gloo's words, accelerate's utils/launch.py's
         *sigcauses.ADDRESS_IN_USE),
    # Round 67: not torch's store client (socket.cpp "The client socket has failed to connect to HOST:PORT (errno: 113"):
    # a wrong MASTER_ADDR fails as often as a firewall (UQ-RCC/hpc-docs#2, accelerate#2468): master-unreachable's.
    _sig("firewall-blocked", r"^(?![^\n]*client socket has failed to connect)[^\n]*?(?:errno: ?113|returned 113)\b|"
         r"(?:Connect to|connect to) \S+ (?:failed|returned)\W*"
         r"(?:No route to host|113)|socketPollConnect: connect returned No route to host",
         "A connection between nodes was rejected on its way (No route to host): a firewall (e.g. firewalld's "
         "REJECT) blocks the rendezvous port or the ports NCCL/gloo open between nodes.",
         "Allow all TCP between the cluster's nodes on the training network (e.g. firewall-cmd --zone=trusted "
         "--add-source=10.0.0.0/24, or ufw allow from that subnet); NCCL and gloo use random ports.", retry=False),
    _sig("master-unreachable", r"client socket has (?:timed out after (?:\d{1,3}s|\d{1,6}ms)\b|failed to connect)|"
         r"failed to connect to any network address|connect\(\) timed out|" + then("timed out ", " rendezvous") + "|"
         r"errno: 11[01] - Connection (?:refused|timed out)|" + sigwords.STORE_NAME_UNRESOLVED,  # round 79
         *sigcauses.MASTER_UNREACHABLE, retry=False),
    # NCCL's "Using" line names its interfaces, "[N]NAME:ADDRESS<0>" each, on one line or wrapped one a line. Only beside
    # a rank that failed (round 104): every run prints that list, a bridge in it included, and within one node NCCL does
    # not use it (a hang of NCCL's INFO lines alone, pytorch#73790: two A6000s' P2P hung behind the IOMMU).
    _sig("nccl-wrong-interface", r"(?:Bootstrap|NET/Socket) : Using (?:(?:(?!(?:Bootstrap|NET/Socket) : Using ).)*\[\d+\])?(?:docker\d|virbr\d|br-\w+|veth\w+|cni\d|"
         r"flannel)|^[ \t]*\[\d+\](?:docker\d|virbr\d|br-\w+|veth\w+|cni\d|flannel)[\w.-]*:[\w.:%-]+<\d+>",
         "NCCL chose a virtual interface (docker0, a bridge) that the other nodes cannot reach.",
         "Set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the training network's interface on every node, "
         "e.g. NCCL_SOCKET_IFNAME=eth0 or ^docker,lo,veth; ranks in containers on a bridge network (Docker's default) "
         "cannot reach other nodes at all: run them with --network=host.", retry=False, needs_a_failure=True),
    # std::terminate with no exception in flight, a rank's last words: no restart, a restart runs a finished script again.
    _sig("exit-abort", r"terminate called without an active exception", *sigcauses.EXIT_ABORT, retry=False,
         aside_if=sigwords.aborts_otherwise),
    _sig("aborted", sigwords.launcher_signal(6) + r"|terminate called (?:after throwing|without an active exception)|"
         r"\bAborted \(core dumped\)|\bSIGABRT\b",
         "A rank aborted (SIGABRT) in native code: an uncaught C++ exception or a failed assertion in torch, "
         "NCCL/gloo or an extension.",
         "Read that rank's last lines: the exception's what() or the assertion names the failing call. If it aborted "
         "while exiting after training finished, end the script with torch.distributed.destroy_process_group() on "
         "every rank.", aside_if=sigwords.ends_a_timeout),
    _sig("segfault", sigwords.SEGFAULT,
         "A rank crashed in native code (segmentation fault): often mismatched builds of torch, DeepSpeed "
         "ops or CUDA libraries on that node, or a bug in an extension.",
         "Compare versions across nodes (`dscluster doctor`), rebuild the DeepSpeed ops on that node "
         "(clear ~/.cache/torch_extensions), and read that rank's log."),
    # No restart (session 28): in every thread of the corpus (8 of 8) the timeout came back, a rank on another code path
    # or data preparation longer than the timeout; the supervisor's own hang detection (hung-collective) is apart.
    _sig("collective-timeout", r"Watchdog caught collective operation timeout|Timed out waiting \d+ms for (?:recv|send) "
         r"operation|failed to pass monitoredBarrier|Some NCCL operations have failed or timed out|"
         + then(r"Work(?:NCCL|Gloo)\(", r"Timeout\(ms\)=\d+\) ran for") + "|" + sigwords.NCCL_ID_WAIT_TIMEOUT + "|"
         + sigwords.WATCHDOG_TIMEOUT_FRAME,
         "A collective timed out: {op_text}{missing_text}The waiting ranks gave up; the cause is on the ranks that "
         "never arrived (a hang, a crash, or a rank that took another code path).",
         "Look at what those ranks were doing (dscluster stacks while it hangs, or their logs); make every rank "
         "call the same collectives in the same order. Raise the timeout only if it is just slow.", False, True),
    _sig("ssh-255", r"ssh exited with exit code 255|Connection to \S+ closed by remote host",
         "The SSH connection to a node dropped while the run was going (node down or rebooted, sshd stopped, network).",
         "Check the node with `dscluster doctor`; `dscluster node start` restarts its sshd.", symptom=True),
    # Round 64 (a symptom): torch's C10D_NCCL_CHECK and NCCLUtils words for ncclSystemError; round 85 OneFlow's too.
    _sig("nccl-system-call", then("NCCL error in: ", ", unhandled system error") + r"|ncclSystemError: System call \((?:"
         r"socket, malloc, munmap, etc\) failed|e\.g\. socket, malloc\) or external library call failed)|"
         + sigwords.NCCL_CHECK_SYSTEM_ERROR,
         "An NCCL call of this rank failed on a system call (a socket, shared memory in /dev/shm, a memory mapping), "
         "mostly while it created the communicator; the NCCL WARN line before torch's error names which.",
         "Rerun with NCCL_DEBUG=WARN and read that line: in a container give NCCL shared memory (--ipc=host, --shm-size"
         "=16g, a pod's emptyDir medium: Memory at /dev/shm); for a socket set NCCL_SOCKET_IFNAME (containers on "
         "Docker's default bridge network cannot reach other nodes: run them with --network=host).", False, True),
    _sig("nccl-remote-exit", then("NCCL", "remote process exited") + "|remote process exited or there was a network error|"
         "ncclRemoteError|" + then("NCCL error", "unhandled system error"),
         "Another rank died (or its network failed) during a collective; the real error is on that rank.",
         "Look at the first failing rank's log.", symptom=True),
    _sig("gloo-peer-closed", sigwords.PEER_CLOSED,  # gloo's and the socket's words, not slurmstepd's
         "A peer rank went away during a collective (it crashed or was killed); this rank failed with it.",
         "Look at the first failing rank's log.", symptom=True),
    # Word boundaries: DeepSpeed's launch.py logs every teardown from its "sigkill_handler", which is not a kill.
    _sig("killed", sigwords.KILLED,
         *sigcauses.KILLED, symptom=True),
    _sig("python-error", r"^Traceback \(most recent call last\):",
         "A rank raised a Python exception.",
         "Read the traceback in that rank's log.", symptom=True),
)

# What an exception's or a tool's own message names (sigmessages.py) right after the disk's: more specific than
# a usage error and everything below, which would otherwise answer with a symptom or the exception's type.
_AT = next(i for i, s in enumerate(_TABLE) if s.name == "write-failed") + 1
SIGNATURES: tuple[Signature, ...] = with_store((*_TABLE[:_AT], *ROUND_SIGNATURES, *MESSAGE_SIGNATURES,
                                                *LOSS_AFTER_MESSAGES, *MODULE_AFTER_MESSAGES, *backends.signatures(),
                                                *_TABLE[_AT:]))


# Signatures whose evidence may stand in the lines just before a rank's error rather than in it: a compile's
# output before "Error building extension", NCCL's WARN lines before "unhandled system error".
BEFORE_THE_ERROR = frozenset({
    "ninja-missing", "build-header-missing", "compiler-unsupported", "cuda-home-missing", "op-build-failed",
    "nccl-ib-memlock", "nccl-ib", "dev-shm-full", "loopback-address", "nccl-no-interface", "driver-too-old",
    "firewall-blocked", "cuda-oom", "device-assert", "undefined-symbol", "shared-lib-missing", "nccl-wrong-interface",
    "nvcc-arch-unsupported", "p2p-unsupported", "loader-lib-missing", "lib-version-missing", "no-kernel-image",
    "precision-unsupported", "duplicate-gpu", "gpu-hardware"}) | BEFORE_VAGUE
# Facts about a node's environment that any rank's lines may show, behind a vague error on another rank.
ENVIRONMENT = frozenset({"loopback-address", "firewall-blocked", "nccl-no-interface", "nccl-ib-memlock", "nccl-ib",
                          "dev-shm-full", "memcg-oom", "driver-too-old", "driver-insufficient", "nccl-wrong-interface",
                          "ib-completion-acs", "efa-security-group"})
VAGUE_TYPES = frozenset({"RuntimeError", "DistBackendError", "OSError", "SystemError", "Exception", "CalledProcessError",
                          "AttributeError", "ImportError", "NCCL WARN"})
SIGNAL_WHY = sigwords.SIGNAL_WHY  # what a signal that ended a rank most often means

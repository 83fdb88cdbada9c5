"""The words that identify the cause of a broad rule of signatures.py, where the same few words are printed by other
components too (session 25 of issue 45: the near misses of broad rules). Rounds 19-28 measured 9 misleading answers
of 84 unseen logs, each a rule whose words meant something else in a new log; each pattern here reads the wording of
the component whose check names the cause, or the frame it raises from, so that the same words printed by another
component, or by the script's own code, get the rank's own words (a generic answer) instead of a wrong cause.
tests/unit/test_explain_nearmisses.py holds the near misses and the originals."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import then

# A traceback's last code line, and 3.11's carets under it, before the exception's own line.
_CODE_LINE = r"[^\n]*\n(?:[ \t]*[~^][~^ \t]*\n)?"

# The training script missing: CPython's own words when the interpreter cannot open the script it was given
# (Modules/main.c, pymain_run_file: "%ls: can't open file %R: [Errno %d] %s"), for ENOENT only (13 is a permission);
# a launcher that executes the script itself (subprocess's _execute_child raising FileNotFoundError for the path).
# Not `No such file or directory: 'X.py'` raised anywhere: a running script that opens a .py file (a config, a
# module it copies) was itself found. An MPI launcher's own words (Open MPI's, with its program's name before them).
SCRIPT_MISSING = (r"can't open file '([^'\n]+)': \[Errno 2\]|in _execute_child\n" + _CODE_LINE +
                  r"(?:\w+\.)*\w+: \[Errno 2\] No such file or directory: '([^'\n]+\.py)'|"
                  r"(?<![\w.-])[\w.-]{1,40} was unable to (?:launch the specified application as it could not access\s{1,4}"
                  r"or execute an executable|find the specified executable file)|execvp error on file \S+ \((?:No such file|"
                  r"Permission)")

# The rendezvous port taken: EADDRINUSE as torch's c10d and gloo print it (`RuntimeError: Address already in use`,
# `(errno: 98 - Address already in use)`, `code: -98, name: EADDRINUSE`) and accelerate's own check (utils/launch.py,
# before it starts torchrun). Not Python's socket error (`OSError: [Errno 98] Address already in use`) nor an ASGI
# server's (uvicorn's `[Errno 98] error while attempting to bind on address (...): address already in use`): torch's
# store never raises those; they are a port of the script's own server (an API, a dashboard), not the rendezvous.
# Review 42: nor pyzmq's (`zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5570')`, zmq_strerror's
# words raised by _check_rc after Socket.bind): a ZeroMQ socket of the script or of a library (vLLM's engine core).
ADDRESS_IN_USE = (r"(?<!\[Errno 98\] )(?<!ZMQError: )(?-i:Address already in use)|EADDRINUSE|errno: 98|Tried to launch "
                  r"distributed communication on port \S+, but another process is utilizing it")

# A rank ended by signal N, as its launcher reports it where the rank printed no words of its own: DeepSpeed's launch.py
# (`[...] exits with return code = -9`) and torchrun's elastic agent (torch/distributed/elastic/multiprocessing/api.py,
# SubprocessContext._poll: `failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s`; MultiprocessContext._poll,
# a function started by start_processes: `... of fn: %s (start_method: %s)`): a negative exit code is the signal's
# number (ProcessFailure). Round 54: not a positive code (`failed (exitcode: 1)`: the rank's own exit, its traceback
# stands above), nor another component's exit code 9 (MinerU's `Child process unexpectedly failed with exitcode=9`).
def launcher_signal(num: int) -> str:
    return (rf"exits with return code = -{num}\b|"
            rf"failed \(exitcode: -{num}\) local_rank: \d+ \(pid: \d+\) of (?:binary|fn):")


# A rank killed (SIGKILL), in the words of the shell (`Killed`), DeepSpeed's launcher (`exits with return code = -9`),
# torch's spawn (`terminated with signal SIGKILL`) and the scheduler's. Review 42: not torchrun's own escalation
# (torch/distributed/elastic/multiprocessing/api.py, PContext.close: `Unable to shutdown process N via Signals.SIGTERM,
# forcefully exiting via Signals.SIGKILL`): it kills the ranks still running after another rank failed, whose own exit
# (`failed (exitcode: 1) local_rank: 0`) is the failure; that SIGKILL is the launcher's cleanup, not the cause.
# Review 46: not what Ray's raylet lists as MAY have happened when a worker's connection drops (src/ray/raylet/
# node_manager.cc, HandleClientConnectionError: `There are some potential root causes. (1) The process is killed by
# SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly
# due to SIGSEGV or other unexpected errors.`), nor its `A worker died or was killed while executing a task by an
# unexpected system error`: neither a kill nor a crash is established (SEGFAULT below leaves item 3 alone too). Nor
# torch's DataLoader naming another signal (torch/csrc/DataLoader.cpp, strsignal's words: `DataLoader worker (pid N) is
# killed by signal: Terminated.`, SIGTERM): that signal's answer, not SIGKILL's.
_RAY_OOM = r" by OOM killer due to high memory usage\. \(2\)"
KILLED = (launcher_signal(9) + r"|(?<!died or was )\bKilled\b(?! by signal: (?!Killed))(?! by SIGKILL" + _RAY_OOM +
          r")|\bsignal 9\b|(?<!forcefully exiting via Signals\.)\bSIGKILL\b(?!" + _RAY_OOM + ")")
SEGFAULT = launcher_signal(11) + r"|Segmentation fault|\bSIGSEGV\b(?! or other unexpected errors)"

# Versions that differ: DeepSpeed's op builder's own words (op_builder/builder.py: "PyTorch version mismatch!", "CUDA
# version mismatch!", "HIP version mismatch!" for ops compiled with another torch or CUDA), NCCL's between ranks. Not
# the words alone: a checkpoint's, a tokenizer's, a protocol's or a cache's "version mismatch" is no torch's or CUDA's.
VERSION_WORDS = r"(?:PyTorch|torch|DeepSpeed|CUDA|HIP|NCCL) version mismatch"

# CPython's compile errors of the script: the `File "PATH", line N` above the error is a file of its own (or no frame
# is shown). Not a file of an installed package or of the standard library (a package written for a newer Python than
# this one), nor code compiled from a string (`File "<string>"`: eval'd data or a config).
_OWN_FILE = r"(?![^\"\n]*(?:[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d|<))"
_COMPILE_ERROR = r"(?:SyntaxError|IndentationError|TabError): "
SYNTAX_ERROR = (r"^[ \t]*File \"" + _OWN_FILE + r"[^\"\n]*\", line \d+[ \t]*\n(?:[ \t][^\n]*\n){0,3}[ \t]*" +
                _COMPILE_ERROR + r"|(?:\A|^(?![ \t])[^\n]*\n)" + _COMPILE_ERROR)

# The dynamic loader's `undefined symbol` in an extension (flash-attn, a DeepSpeed op, apex): built against another
# torch. Not a symbol missing from torch's own libraries (torch itself loaded against another MKL, NCCL, cuDNN or CUDA
# runtime, or two torch installs mixed: `libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent` is MKL 2024.1's), nor
# MPI's (mpi4py or Horovod built against another MPI).
UNDEFINED_SYMBOL = (r"(?<!libtorch_cpu\.so: )(?<!libtorch_cuda\.so: )(?<!libtorch\.so: )(?<!libtorch_python\.so: )"
                    r"(?<!libc10\.so: )(?<!libc10_cuda\.so: )undefined symbol: (?!P?MPI_|ompi_|opal_)\w+")

# A line naming no disk though its errno is ENOSPC: /dev/shm's (dev-shm-full), and inotify's watch limit (watchdog's
# `OSError: [Errno 28] inotify watch limit reached`, Node's `ENOSPC: System limit for number of file watchers
# reached`): fs.inotify.max_user_watches, not a disk. And torch's shared-memory files (round 36): MapAllocator's
# `unable to write to file </torch_PID_N>: No space left on device (28)`, a DataLoader worker's batch in /dev/shm.
NOT_A_DISK = r"^(?!.*(?:shm|inotify|file watchers|</torch_))"

# A loopback address announced to the other ranks, in gloo's words (pair.cc: `connect [127.0.1.1]:PORT`, `remote=[..]`,
# `local=[..]`), torch's store's (`failed to connect to [127.0.1.1]:PORT`) and NCCL's (`Connect to 127.0.1.1<PORT>`): the
# address in brackets or with NCCL's <port>. Not a client of a server on the node itself (an API client's `Failed to
# connect to 127.0.0.1:8000`): a local service that is down, not an address the node gave its peers.
LOOPBACK = (r"(?:connect|Connect to|failed to connect to|remote=|local=)\s*(?:\[(?:::ffff:)?127\.0\.[01]\.1\]|"
            r"(?:::ffff:)?127\.0\.[01]\.1<\d)")

# NCCL's IB async thread (ncclIbAsyncThreadMain) on an event that breaks a connection: before 2.23 every event but
# COMM_EST as `Got async event : <ibv_event_type_str>`, since 2.23 `async fatal event[ on QP/CQ ...]: <str>`. Review
# 157: not the events of a working fabric (rdma-core's names: a port coming up, an SM or GID table change, client
# reregistration), which 2.29+ prints as `Got non-fatal async event: <str>(<n>)` (vllm#5342: `Got async event : GID table
# change` beside an unrelated worker error); nor the SRQ NCCL does not use.
_IB_EVENTS_NOT_FAILURES = (r"port active|LID change|P_Key change|SM change|client reregistration|GID table change|"
                           r"path migrated|send queue drained|last WQE reached|SRQ limit reached")
NCCL_IB_ASYNC_FAILURE = (r"async fatal event(?! on SRQ)|async event ?:(?! ?(?:" + _IB_EVENTS_NOT_FAILURES + r")\b)")

# A launcher's variable missing from os.environ (a script's own lookup): Python's KeyError raised in os.py's
# _Environ.__getitem__ (its frame, as a traceback or IPython shows it, or `environ` on the code line above), or printed
# with no frame above it. Not a KeyError of the script's own dict that happens to hold a key named RANK.
LAUNCHER_VARS = r"(?:LOCAL_RANK|RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT)"  # env-var-unset: the others
_LAUNCHER_KEY = r"KeyError: b?['\"]" + LAUNCHER_VARS + r"['\"]"
# Each marker's rest of line is read up to the next marker only, so a line of many is read once (linear time).
ENV_KEY_MISSING = (r"(?:os\.py\W(?:(?!os\.py\W|__getitem__)[^\n])*__getitem__(?:(?!os\.py\W)[^\n])*|"
                   r"environ(?:(?!environ)[^\n])*)\n(?:[^\n]*\n){0,8}?[ \t]*" + _LAUNCHER_KEY +
                   r"|(?:\A|^(?![ \t])[^\n]*\n)" + _LAUNCHER_KEY)

# ssh's own failures, where ssh was git's transport (a clone, pip's `git+ssh://`, a submodule) and not a launcher's
# way to a node: git prints `fatal: Could not read from remote repository.` (or `the remote end hung up`) on the
# next line (connect.c, transport), the user is git's (`git@github.com: Permission denied (publickey)`), or the host is
# a code forge's. Session 25's second review: a node's key, host key or address is not what failed there.
_FORGES = (r"github\.com", r"gitlab\.com", r"bitbucket\.org", r"gitee\.com", r"hf\.co", r"huggingface\.co",
           r"ssh\.dev\.azure\.com")
_FORGE = r"(?:" + "|".join(_FORGES) + r")\b"
_GIT_FATAL = r"(?:[^\n]*\n)?[ \t]*(?:remote: [^\n]*\n)?fatal: (?:Could not read from remote repository|the remote end hung up)"


def _not_git(words: str, stop: str) -> str:
    """`words`, read at its last occurrence on its line (the rest of the line up to `stop` is read once: linear time),
    where git's fatal line does not follow."""
    return words + r"(?:(?!" + stop + r")[^\n])*(?:\Z|\n(?!" + _GIT_FATAL + r"))"


_FORGE_USER = "".join(rf"(?<!git@{h}: )" for h in _FORGES)
SSH_KEY_REFUSED = _FORGE_USER + _not_git(r"Permission denied \(publickey", r"Permission denied \(publickey")
SSH_HOST_KEY = (_not_git(r"Host key verification failed", r"Host key verification failed") +
                r"|REMOTE HOST IDENTIFICATION HAS CHANGED(?![\s\S]{0,3000}?Host key for \[?" + _FORGE + r")")
SSH_UNREACHABLE = _not_git(r"ssh: (?:connect to host (?!" + _FORGE + r")\S+ port \d+: (?:Connection refused|Connection "
                           r"timed out|No route to host)|Could not resolve hostname (?!" + _FORGE + r"))", r"ssh: ")

# torch.utils.cpp_extension's check of the host compiler against the CUDA toolkit (_check_cuda_version: "The current
# installed version of g++ (4.8.5) is less than the minimum required version by CUDA 11.7 (6.0.0)"). Not a package's
# own minimum (`The installed version of bitsandbytes (0.39.0) is less than the minimum required version`).
COMPILER_TOO_OLD = r"is less than the minimum required version by CUDA"

# A TORCH_CUDA_ARCH_LIST that DeepSpeed's op builder cannot parse: an arch with a letter suffix (9.0a, 10.0f) as its
# value, or int()'s error on one. Not the variable's name alone: torch's cpp_extension warns `TORCH_CUDA_ARCH_LIST is
# not set, all archs for visible cards are included` before every JIT build.
CUDA_ARCH_SUFFIX = (r"TORCH_CUDA_ARCH_LIST=['\"]?(?:\d{1,3}(?:\.\d{1,2})?(?:\+PTX)?[;, ]{1,3}){0,16}\d{1,3}\.?\d{0,2}"
                    r"[a-z]\b|invalid literal for int\(\) with base 10: '\d+a'")

# The shell of a remote command (pdsh's, ssh's `bash -c`: `bash: line 0: cd: DIR`, `line 1` since bash 5.1) that cannot
# enter the launching node's working directory. Not a script's own `cd` (bash names the script: `./run.sh: line 4: cd:`).
REMOTE_CD = r"(?<![\w./-])(?:ba)?sh: line [01]: cd: [^:\n]+: No such file or directory"

# torch's addmm under F.linear (functional.py's `linear` frame, or no frame shown) given a weight that is no matrix:
# ZeRO-3's partitioned placeholder. Not the script's own torch.addmm of a 3-D tensor.
LINEAR_NOT_2D = (r"(?:[/\\]functional\.py\", line \d+, in linear\n" + _CODE_LINE + r"|(?:\A|^(?![ \t]|\[rank\d+\]: [ \t])[^\n]*\n))"
                 r"(?:\[rank\d+\]: )?RuntimeError: tensors must be 2-D")

# A device that cannot compute in bf16, in the words of torch's autocast (`Current CUDA Device does not support
# bfloat16`), transformers' TrainingArguments (`Your setup doesn't support bf16/gpu`) and scripts' own checks of the
# GPU. Not an array library without the dtype (CuPy's `CuPy does not support bfloat16 yet`, NumPy's).
_BF16_ON_CPU = r"/gpu\. You need to assign use_cpu\b[^\n]{0,60}?on CPU\.(?! You need Ampere)"  # BF16_NO_GPU's, below
DEVICE_NO_BF16 = (r"(?:GPU|device|card|hardware|setup|platform)s?\b[^\n]{0,20}?(?:does not|doesn't) support "
                  r"(?:bfloat16|bf16)(?!" + _BF16_ON_CPU + ")")
# Round 162: transformers' TrainingArguments._validate_args where no CUDA device is visible at all: "Your setup doesn't
# support bf16/gpu. You need to assign use_cpu if you want to train the model on CPU." (4.4x to 5.x), with " You need
# Ampere+ GPU with cuda>=11.0." appended only where CUDA is available (an old GPU: DEVICE_NO_BF16's). Read as no-gpu.
BF16_NO_GPU = r"support bf16" + _BF16_ON_CPU

# DeepSpeed's config check (runtime/config.py: `bfloat16 and fp16 modes cannot be simultaneously enabled`). Not the
# words alone: SageMaker's `'ddp' and 'horovod' cannot be simultaneously enabled` is a launcher's, no ds_config's.
DS_PRECISIONS_BOTH = r"(?:bfloat16|bf16|fp16)[^\n]{0,40}?modes? cannot be simultaneously enabled"

# DeepSpeed's engine (_configure_optimizer: `You are using an untested ZeRO Optimizer. Please add
# <"zero_allow_untested_optimizer": true> in the configuration file to use it.`). Not the key alone: a ds_config pasted
# beside another error holds `"zero_allow_untested_optimizer": true,` (round 86, LLaMA-Factory#1243).
DS_UNTESTED_OPTIMIZER = r'You are using an untested ZeRO Optimizer|add <"zero_allow_untested_optimizer"'

# Session 25's third review (tests/unit/test_explain_nearmisses3.py): words every rank, or another component, prints.
# A peer gone during a collective: the socket's words (`Connection closed by peer`, `Connection reset by peer`, `Broken
# pipe`) where the collective library prints them: gloo's transport (gloo/transport/tcp/pair.cc: `[.../pair.cc:598]
# Connection closed by peer`, `Read error ...: Connection reset by peer`), NCCL's (socket.cc's `socketProgress...`,
# `Call to recv from ... failed : Connection reset by peer`, and the `NCCL WARN` lines), torch's c10d store (`[c10d]`,
# `socket.cpp`, `store->get('0') got error: Connection reset by peer`, a Dist*Error), on the same line, or an error
# raised under a torch.distributed frame. Review 42 (issue 45): not Python's own BrokenPipeError or ConnectionResetError
# elsewhere: a script's output piped into `head` (the signal module's "Note on SIGPIPE"), a logging handler whose
# stream was closed (`--- Logging error ---`), a multiprocessing queue's feeder thread writing to a DataLoader worker's
# or a pool's closed pipe (multiprocessing/queues.py, _feed), an HTTP client's reset by a web service (requests'
# `ConnectionResetError(104, 'Connection reset by peer')`), ssh's `kex_exchange_identification: read: Connection reset
# by peer`; nor slurmstepd's `write to unblock task N failed: Broken pipe` (src/slurmd/slurmstepd/mgr.c,
# exec_wait_signal_child: the task it would let exec() had already exited). No peer rank went away there, and no
# restart is justified by it.
_COLLECTIVE = (r"gloo|NCCL|c10d|pair\.cc|socket\.cpp|TCPStore|ProcessGroup|torch\.distributed|store->|"
               r"Dist(?:Network|Backend|Store)Error|socket(?:Progress|Poll|Recv|Send|Wait|StartConnect)\w*:|"
               r"Call to (?:recv|send) from \S+ failed")
_PEER_WORDS = r"Connection (?:closed|reset) by peer|Broken pipe"
PEER_CLOSED = (then(_COLLECTIVE, _PEER_WORDS) + "|" + then(_PEER_WORDS, _COLLECTIVE) + "|" +
               r"[/\\]torch[/\\]distributed[/\\](?:(?![/\\]torch[/\\]distributed[/\\])[^\n])*\n" + _CODE_LINE + r"(?:\w+\.)*\w+: [^\n]*?(?:" +
               _PEER_WORDS + r")|" + then(r"\[gloo\]", "Read error|Connection refused"))

# /dev/shm too small, in torch's DataLoader words (`This might be caused by insufficient shared memory (shm)`). Not
# a GPU's on-chip shared memory (a kernel's `static assertion failed with "... (insufficient shared memory for
# shape)"`, Triton's `out of resource: shared memory`): a kernel's tile too large for the SM, no /dev/shm.
SHM_INSUFFICIENT = r"insufficient shared memory \(shm\)"

# DeepSpeed's pipeline engine (runtime/pipe/engine.py: `ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism`,
# `pipline` in older releases). Not another library's refusal of its own feature with pipeline parallelism (vLLM's
# `Speculative decoding is currently incompatible with pipeline parallelism`), nor a model's warning (`use_cache=True`
# is incompatible with pipeline parallelism. Setting `use_cache=False`).
ZERO_NOT_WITH_PIPELINE = r"\bZeRO\b[^\n]{0,40}?incompatible with pipe?line parallel"
# Settings of one ds_config that DeepSpeed refuses together (signatures.py's ds-config-invalid).
DS_CONFIG_CLASHES = ZERO_NOT_WITH_PIPELINE + "|" + DS_UNTESTED_OPTIMIZER + "|" + DS_PRECISIONS_BOTH

# DeepSpeed's own refusals of a combination of features (deepspeed/runtime/engine.py, config.py, zero/stage3.py,
# pipe/engine.py: `no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3`, `MoE not
# supported with Stage 3`, `1bit-Adam is not compatible with ZeRO`, `... is not supported with ZenFlow/DeepCompile`), and
# ZeRO named before the refusal (transformers' `DeepSpeed Zero-3 is not compatible with ... device_map`). Review 46:
# ZeRO spelled as DeepSpeed spells it, not any word `zero` after the refusal (torch inductor's `argmax not supported for
# zero-dimension tensors!`, torch/_inductor/ir.py); and no offload alone: DeepSpeed's refusals name ZeRO, other
# libraries' of their own offload do not (Megatron-LM's `CUDA graphs not supported with CPU offloading.`, megatron/core/
# transformer/transformer_config.py; SGLang's `... is not supported with CPU offload yet.`, srt/mem_cache/memory_pool.py).
_REFUSED = r"(?:incompatible|not (?:yet |currently )?(?:supported|compatible))"
DS_INCOMPATIBLE = (_REFUSED + r"\b[^\n]{0,120}?\b(?:(?-i:ZeRO)|stage ?[0-3]\b|DeepCompile|ZenFlow)|"
                   r"(?:\b(?-i:ZeRO)(?:[- ]?(?:stage[- ]?)?[0-3])?|\b(?-i:Zero)[- ]?(?:stage[- ]?)?[0-3])\b[^\n]{0,60}?\b"
                   r"(?:is |are )?" + _REFUSED + r" with\b|"
                   # round 106: engine.py's no_sync refusal quoted wrapped over lines (starVLA/starVLA#368)
                   r"\bno_sync context manager is incompatible with\s+gradient\s+partitioning\s+logic\s+of\s+(?-i:ZeRO)")

# The HF Trainer's "Can't find a valid checkpoint at" (trainer.py _load_from_checkpoint: no weights file, adapter or FSDP
# checkpoint it knows in the directory) and its DeepSpeed integration's "[deepspeed] failed to resume from checkpoint"
# (sigmessages.py's ckpt-missing-optimizer-states). Round 57: the Trainer reads FSDP's sharded checkpoints
# (pytorch_model_fsdp_0/, written under SHARDED_STATE_DICT) only since huggingface/transformers#26180 (its
# is_fsdp_ckpt check); an older one refused that valid checkpoint with the same words (huggingface/transformers#26186).
CKPT_WEIGHTS_ONLY_CAUSE = ("The checkpoint the run resumes from holds nothing this loader can resume: weights only "
                           "(saved with save_only_model, a LoRA adapter or one module saved alone), without DeepSpeed's "
                           "optimizer states (global_stepN/), a directory that is not a checkpoint, or a layout this "
                           "transformers does not read (an FSDP sharded checkpoint, pytorch_model_fsdp_0/, before the "
                           "Trainer's FSDP checkpointing fixes of September 2023).")
CKPT_WEIGHTS_ONLY_FIX = ("Resume from a checkpoint saved in full (without save_only_model; a checkpoint-N holding "
                         "global_stepN/ and `latest`), or start a new run from those weights (load them as the model "
                         "instead of resume_from_checkpoint); DeepSpeed's own load_checkpoint reads weights alone with "
                         "load_optimizer_states=False, load_lr_scheduler_states=False. A checkpoint-N holding "
                         "pytorch_model_fsdp_0/ and optimizer_0/ is a whole FSDP checkpoint: upgrade transformers and "
                         "accelerate on every node and resume from it again.")

# Round 62 (issue 45): the ranks other than 0 giving up waiting for rank 0 to publish the NCCL unique id in the c10d
# store, in torch's own words (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, broadcastUniqueNCCLID: "[%d] is
# setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '%s', but
# store->get('%s') got error: " + the store's; torch 1.x spelt it "retreiving"): only the store's timeout (TCPStore's
# `Socket Timeout`, torch 2.3+'s `wait timeout after Nms`). Rank 0 reached the store but not the communicator's set-up in
# time: still busy (tokenizing a large dataset under main_process_first, waiting on a prompt), hung or silently dead.
# Not the store's `Connection reset by peer` (rank 0 gone: PEER_CLOSED) nor `Failed to recv, got 0 bytes`.
NCCL_ID_WAIT_TIMEOUT = (r"is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId from \[\d+\] via c10d "
                        r"key-value store by key '[^'\n]*', but store->get\('[^'\n]*'\) got error: "
                        r"(?:Socket Timeout|wait timeout after \d+\s*ms)")

# Round 85: NCCL's ncclSystemError in a framework's own check rather than torch's C10D_NCCL_CHECK: OneFlow's
# OF_NCCL_CHECK (oneflow/core/device/nccl_util.h: LOG(FATAL) << "Check failed: " #condition " : " <<
# ncclGetErrorString(status) << " (" << status << "). " << "To see more detail, please run OneFlow with system variable
# NCCL_DEBUG=INFO"), around ncclCommInitRank and ncclGroupEnd in its eager NCCL comm manager. ncclGetErrorString names
# ncclSystemError "unhandled system error"; the checked expression is an NCCL call (ncclXxx(...)). Another error string
# ("unhandled cuda error", "remote process exited") is not this, nor a plain process's "Check failed:" line.
# The call's arguments hold parentheses one deep at most (device_id2comm.at(device_id)): matched, not skipped to the
# line's end, so a line of many checks costs no more than its length.
NCCL_CHECK_SYSTEM_ERROR = r"Check failed: nccl[A-Z]\w*\((?:[^()\n]|\([^()\n]*\))*\) : unhandled system error\b"

# Round 76: the C++ backtrace of NCCL's watchdog timeout, where a log kept it and lost the message above it.
# ProcessGroupNCCL.cpp's WorkNCCL::checkTimeout builds the "Watchdog caught collective operation timeout" error
# (C10_BUILD_ERROR) only once the work is past its timeout, so its backtrace starts in checkTimeout ("Exception raised
# from checkTimeout at ...", frame #1 "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<...>)", before 2.2
# c10::optional); the watchdog's other errors (a CUDA error in finishedGPUExecutionInternal/isCompleted, an NCCL error
# in checkForNCCLErrors) are raised from other frames.
WATCHDOG_TIMEOUT_FRAME = (r"ProcessGroupNCCL::WorkNCCL::checkTimeout\((?:std|c10)::optional<|"
                          r"Exception raised from checkTimeout at \S*ProcessGroupNCCL\.cpp")

# Round 121: how that timeout ends the process. ProcessGroupNCCL's watchdog (ncclCommWatchdog / Watchdog::run) rethrows
# the timeout from its own thread ("Some NCCL operations have failed or timed out ... we are taking the entire process
# down", "Process group watchdog thread terminated with exception"), so the rank ends in std::terminate: SIGABRT,
# "terminate called after throwing an instance of 'c10::DistBackendError'" (before 2.2 'std::runtime_error'), the
# shell's or srun's "Aborted (core dumped)", torchrun's "Signal 6 (SIGABRT)". An abort printed after the timeout's
# words in the same stream, or whose own what() (within 3 lines: a posted log may break the terminate line) is the
# timeout, is that end, not a crash of its own.
_WATCHDOG_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout|" + WATCHDOG_TIMEOUT_FRAME, re.IGNORECASE)


def ends_a_timeout(m: re.Match, texts: Iterable[str]) -> bool:
    """aborted's Signature.aside_if: the abort follows torch's watchdog timeout in the text it was found in, or its
    what() is that timeout."""
    if _WATCHDOG_TIMEOUT.search(m.string, 0, m.start()):
        return True
    what = next((line for line in m.string[m.end():].split("\n", 4)[:4] if "what():" in line), "")
    return "watchdog caught collective operation timeout" in what.lower()


_LAST_FOUND: dict[re.Pattern, tuple[tuple[str, ...], bool]] = {}  # pattern -> (the streams' texts, found)


def found_in_any(pattern: re.Pattern, texts: Iterable[str]) -> bool:
    """Whether `pattern` is found in any of a failure's stream texts. An aside_if that looks at every stream is asked
    once per stream its signature matches, with the same tuple (explain._explain_streams makes it once): the answer
    for that tuple is kept, so the streams are read once per failure, not once per matching stream (a log of
    thousands of ranks with the same last words). Kept by identity, with the tuple itself, so no other texts can
    be taken for it."""
    texts = tuple(texts)
    last = _LAST_FOUND.get(pattern)
    if last is not None and last[0] is texts:
        return last[1]
    found = any(map(pattern.search, texts))
    _LAST_FOUND[pattern] = (texts, found)
    return found


_THROWN = re.compile(re.escape("terminate called after throwing"))  # as written: case-sensitive


def aborts_otherwise(m: re.Match, texts: Iterable[str]) -> bool:
    """exit-abort's Signature.aside_if: a C++ exception reached std::terminate in the failure ("terminate called after
    throwing" in any stream, or its what() in the text read), or torch's watchdog timed a collective out in any stream
    (the timeout the abort ends; ends_a_timeout reads only the text before the abort): that is the cause, not a thread
    left running at exit."""
    texts, own = tuple(texts), m.string  # `own`: the stream or the error's block it was found in
    return "what():" in own or bool(_THROWN.search(own) or _WATCHDOG_TIMEOUT.search(own)) or \
        found_in_any(_THROWN, texts) or found_in_any(_WATCHDOG_TIMEOUT, texts)


# What a signal that ended a rank most often means (explain.py's answer for a rank with no words of its own).
SIGNAL_WHY = {
    "SIGKILL": "often the kernel's out-of-memory killer (host RAM), or an operator",
    "SIGSEGV": "a crash in native code (a CUDA/C++ extension, or a driver)",
    "SIGBUS": "a bus error, often /dev/shm too small",
    "SIGABRT": "an abort in native code (a failed assertion, NCCL/gloo aborting the process)",
    "SIGFPE": "an arithmetic fault in native code",
}

# Round 79: torch 2.x's TCPStore client (c10d/TCPStore.cpp's connect loop: "TCP client failed to connect/validate to
# host {host}:{port} - retrying (try=..., timeout=...ms, delay=...ms): {error}", as the corpus's c10d-format-addr logs
# quote it; the source not read here) naming a host name that does not resolve (gai_strerror's words for EAI_NONAME,
# EAI_AGAIN, EAI_NODATA) in the same line. That client retries the lookup for its whole timeout, so unlike torch 1.x's
# at once fatal `host not found` (sigtorch.py's master-unreachable, restarted) a name that did not resolve by then will
# not: signatures.py's master-unreachable, no restart.
STORE_NAME_UNRESOLVED = (r"TCP client failed to connect/validate to host [\w.:\[\]-]{1,300}:\d+ - [^\n]{0,600}?\b"
                         r"(?:Name or service not known|Temporary failure in name resolution|No address associated "
                         r"with hostname)")

# A write that failed, in the writer's own words (session 28): PyTorch's C++ stream ("basic_ios::clear: iostream
# error"), its zip writer ("[enforce fail at inline_container.cc:N] . unexpected pos A vs B"), its file writer
# (torch/csrc/serialization.cpp, doWrite: "write(): fd N failed with STRERROR", any error of the kernel's). None of
# them names the disk: the supervisor looks at it (runs/preparing/diskspace.py). A named file's Input/output error,
# read or written, is the storage's (sigstorage.py).
WRITE_FAILED = (r"basic_ios::clear: iostream error|" + then(r"inline_container\.cc:\d+\]", "unexpected pos") +
                r"|\bwrite\(\): fd \d+ failed with ")

# torch.utils.cpp_extension's JIT load (load -> _jit_compile, round 83): _get_build_directory prints "Using {dir} as
# PyTorch extensions root..." when verbose (DeepSpeed's op builder loads verbose), then each process takes a FileBaton
# on {dir}/{op}/lock; the one that gets it prints "Creating extension directory", "Emitting ninja build file",
# "Building extension module" and builds, the others wait in FileBaton.wait (torch/utils/file_baton.py: sleep while the
# lock file exists) and say nothing. A log (a rank's stream) that ends at that line with no build begun in it is every
# process waiting on a lock no build holds (a build killed earlier left it); so is a stack (py-spy's `wait
# (torch/utils/file_baton.py:42)`, faulthandler's or a Ctrl-C traceback's frame) standing in FileBaton.wait.
# The build begun, in its lines (a process that found no extension folder, so no lock in it, "Creating extension
# directory"; the baton's holder, "Emitting ninja build file", "Building extension module") or its frames in a stack
# (_write_ninja_file_and_build_library, _run_ninja_build): a wait beside it waits for that build, not a stale lock, in
# this text or in another stream of the same failure (review 89: stale-extension-lock's Signature.aside_if,
# signatures._waits_on_a_build; another node's ranks on a shared home directory while the first node compiles, a Ctrl-C
# or a py-spy dump of every rank while rank 0 compiles).
JIT_BUILD_BEGUN = (r"Creating extension directory|Emitting ninja build file|Building extension module|"
                   r"\b_write_ninja_file_and_build_library\b|\b_run_ninja_build\b")
TORCH_JIT_WAIT = (r"\A(?![\s\S]*(?:" + JIT_BUILD_BEGUN + r"))[\s\S]*?(?P<ev>"
                  + then("Using ", r" as PyTorch extensions root\.\.\.") + r"(?=\s*\Z)"
                  r"|file_baton\.py\"?,? line \d+,? in wait\b|\bwait \([^()\n]*file_baton\.py:\d+\))")

# Python's pickle refusing an object (round 87; CPython 3.11's pickle.py/_pickle.c save_global and getattribute,
# Objects/typeobject.c's reduce for objects without a pickle protocol, Modules/_ctypes/_ctypes.c): the message names it.
_PICKLE_REFUSED = (r"Can't pickle local object |Can't pickle <[^\n]{1,300}?>: (?:it's not (?:the same object|found) as |"
                   r"attribute lookup \S{1,200} on \S{1,200} failed)|cannot pickle '[\w.]{1,100}' object|"
                   r"can't pickle [\w.]{1,100} objects|ctypes objects containing pointers cannot be pickled")
# What shows the processes were started with spawn (Lightning's ddp_spawn in any spelling, DDPSpawnStrategy; the frames
# of torch.multiprocessing.spawn and multiprocessing's spawn start) or that the run is on several GPUs (where Lightning
# 1.x picked ddp_spawn by itself): a title's "on N>1 GPUs", a command's gpus=2 / devices=4, "GPU DDP training".
_SPAWN_OR_GPUS = (r"ddp[ _-]?spawn|\bmp\.spawn\(|multiprocessing[/\\]spawn\.py|popen_spawn_(?:posix|win32)\.py|"
                  r"ForkingPickler\(|\bstart_processes\(|\bGPUs\b|\b(?:gpus|devices)\s*=\s*(?:[2-9]|[1-9]\d|-1|\[\d+\s*,)|"
                  r"\bDDP\b|multi-?GPU")
# Another pickler on the error's line or between: copy.deepcopy (the same TypeError), torch.save, a checkpoint's save,
# torch.distributed's object collectives (all_gather_object, broadcast_object_list: _object_to_tensor pickles).
_OTHER_PICKLER = (r"[^\n]*(?:copy\.py|deepcopy|serialization\.py|torch\.save|save_checkpoint|"
                  r"(?:gather|broadcast|scatter|send|recv)_object|_object_to_tensor)")
# The refusal on a line that names the spawn start or several GPUs, or up to three lines after one that does, with no
# other pickler's frame between; the evidence is the refusal's line (group ev).
SPAWN_UNPICKLABLE = (r"(?:(?:" + _SPAWN_OR_GPUS + r")(?:(?!" + _SPAWN_OR_GPUS + r")[^\n])*\n(?:(?!" + _OTHER_PICKLER
                     + r")[^\n]*\n){0,3}?(?!" + _OTHER_PICKLER + r")|^(?!" + _OTHER_PICKLER + r")(?=[^\n]*?(?:"
                     + _SPAWN_OR_GPUS + r")))[^\n]*?(?P<ev>" + _PICKLE_REFUSED + ")")

# Round 159 (live): DeepSpeed's engine (runtime/engine.py _backward_prologue, 0.18+) refusing a tensor.backward() the
# training loop ran itself where it cannot follow one (ZeRO stage 0, a torch without the hooks it needs), and its
# post-backward check when the loss needed scaling (fp16, ZeRO's loss scaler) but was not scaled.
DS_DIRECT_BACKWARD = (r"(?<!\(\")Direct calls to tensor\.backward\(\) are not supported in this configuration|"
                      r"(?<!\(\")Loss scaling is required for this configuration, but backward\(\) was called directly")

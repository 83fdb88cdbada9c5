"""Failure signatures read from what an exception's message, a library's assertion or a tool's own error line
says, not from the exception's type: "RuntimeError" alone says nothing, "RuntimeError: CUDA error: peer access
is not supported between these two devices" names the cause. signatures.py places this table right after the
disk's signatures, before the usage errors and everything that only says something failed.

Each pattern is the wording of the library or tool that prints it (DeepSpeed's assertion texts, the HF
Trainer's checks, CUDA's and NCCL's error strings, the dynamic loader's and the shell's in any of the
languages they are translated to; a launcher backend's own are its `signatures`, placed right after
these), so a log from any script that hits the same cause is explained the same way.
`retry=False` wherever the same command meets the same cause again. The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py).
"""

from __future__ import annotations

from dscluster import sigcauses
from dscluster.sigaccelerate import ACCELERATE_SIGNATURES
from dscluster.sigcheckpoint import CHECKPOINT_SIGNATURES, CKPT_READS_BEFORE
from dscluster.sigcompile import COMPILE_SIGNATURES
from dscluster.sigcontainers import CONTAINER_SIGNATURES
from dscluster.sigdata import DATA_BEFORE_VAGUE, DATA_SIGNATURES
from dscluster.sigdeepspeed import DEEPSPEED_SIGNATURES
from dscluster.sigdevices import CUDA_NOT_BUILT, DEVICE_SIGNATURES
from dscluster.sigdssource import DS_COMM_UNSET, DS_SOURCE_SIGNATURES
from dscluster.sigelastic import ELASTIC_SIGNATURES
from dscluster.sigfabrics import FABRIC_SIGNATURES
from dscluster.sigfinetune import FINETUNE_SIGNATURES
from dscluster.sigframeworks import FRAMEWORK_SIGNATURES
from dscluster.sighf import HF_SIGNATURES, HUB_RATE_LIMITED
from dscluster.sighf5 import HF5_SIGNATURES
from dscluster.siglibs import LIBRARY_SIGNATURES
from dscluster.sigmemory import MEMORY_BEFORE_VAGUE, MEMORY_READS_BEFORE, MEMORY_SIGNATURES
from dscluster.sigmodels import MODEL_SIGNATURES
from dscluster.signccl import CCL_SIGNATURES
from dscluster.signumerics import NUMERIC_SIGNATURES
from dscluster.sigoutputs import OUTPUT_SIGNATURES
from dscluster.sigparallel import PARALLEL_SIGNATURES
from dscluster.sigprocess import PROCESS_SIGNATURES
from dscluster.sigrlhf import RLHF_SIGNATURES
from dscluster.sigsetup import SETUP_SIGNATURES
from dscluster.sigstorage import STORAGE_SIGNATURES
from dscluster.sigtorch import LOCAL_RANK_NEGATIVE, TORCH_SIGNATURES
from dscluster.sigtracking import TRACKING_SIGNATURES, WANDB_NO_RUN
from dscluster.sigtraining import NOTEBOOK_LAUNCHER_FORK, TRAINING_SIGNATURES
from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import BF16_NO_GPU, DEVICE_NO_BF16, DS_INCOMPATIBLE, ENV_KEY_MISSING
from dscluster.sigworld import WORLD_READS_BEFORE, WORLD_SIGNATURES
from dscluster.sigzero3 import ZERO3_READS_BEFORE
from dscluster.strerror import EMFILE

# The shell's "command not found", as bash and dash print it in the locales users run (en, zh-CN, zh-TW, ja,
# ko, de, fr, es, pt, it, ru, pl); a full-width colon where the locale writes one.
NOT_FOUND = (r"\s*[:：]\s*(?:command not found|not found|未找到命令|找不到命令|命令找不到|找不到指令|指令找不到|"
             r"コマンドが見つかりません|명령(?:어)?을? 찾을 수 없(?:음|습니다)|Befehl nicht gefunden|commande introuvable|"
             r"orden no encontrada|no se encontró la orden|comando não encontrado|comando non trovato|"
             r"команда не найдена|nie znaleziono polecenia|polecenie nie znalezione)")

# A submodule of a package that is installed (Python names the dotted module only once the package itself imported:
# "No module named 'transformers.deepspeed'", "'torch._six'"), or a package's version check that names the range
# and the version found: the package is there, in another version than the code was written for (import-name), not
# missing from the node (module-not-found). Round 22 added the frameworks run beside them on multi-GPU servers
# (colossalai.legacy, a subpackage its later releases have; mmcv._ext, the compiled ops only mmcv-full carries).
# Round 30 the large-scale training stacks' own: NVIDIA's nvidia-modelopt (imported as modelopt, which NeMo and
# Megatron-Bridge call into), MosaicML's composer and llm-foundry.
# Packages that people install (never a script's own module): a name missing from one of them is a version of it other
# than the code's, where the same name missing from the script's own package is its own bug.
_PACKAGES = (r"(?:torch|torchvision|torchaudio|transformers|deepspeed|accelerate|peft|trl|datasets|huggingface_hub|"
             r"safetensors|tokenizers|diffusers|bitsandbytes|flash_attn|apex|triton|xformers|vllm|numpy|scipy|pydantic|"
             r"lightning|pytorch_lightning|lightning_fabric|colossalai|fairseq|detectron2|mmcv|mmengine|mmdet|mmseg|"
             r"megatron|nemo|torchtune|ultralytics|horovod|pandas|sklearn|timm|einops|sentencepiece|optimum|auto_gptq|"
             r"awq|modelscope|swift|llamafactory|unsloth|liger_kernel|megablocks|transformer_engine|torchao|mpi4py|ray|"
             r"wandb|tensorboard|protobuf|packaging|setuptools|pkg_resources|jax|tensorflow|keras|modelopt|composer|"
             r"llmfoundry)")
_INSTALLED = _PACKAGES + r"\.\w"
# A top-level module only: Python names a dotted one (`'colossalai.legacy'`, `'utils.helpers'`) only once its package
# imported, so the package is on the node (in another version, or the code's copy lacks the file): never "not installed".
NOT_INSTALLED = r"No module named '?(?!" + _INSTALLED + r")(\w+)'?(?![\w.])|Error while finding module specification for"
# Python's `cannot import name 'N' from 'MODULE' (PATH)` where the module is an installed package's (a listed one, or its
# file under site-packages): that package in another version. Not the script's own module (a path of its own), nor
# Python's `from partially initialized module` (a circular import, or a script named like the package). Round 126: the
# module may stand on the next line (a message wrapped before it: modelscope/ms-swift#9814's).
CANNOT_IMPORT = (r"ImportError: cannot import name '\w+' from[ \n]'(?:" + _PACKAGES + r"(?:\.[\w.]+)?'|[\w.]+' \((?:(?!"
                 r"[/\\](?:site|dist)-packages[/\\]|cannot import name)[^)\n])*[/\\](?:site|dist)-packages[/\\])")
# Python's TypeError for a keyword the called function does not take, where the failing line (the traceback's last
# code line, maybe under 3.11's carets) calls a dotted name of an installed package (`deepspeed.zero.Init(
# sequence_data_parallel_group=...)` on a DeepSpeed older than Megatron-DeepSpeed): the package in another version than
# the calling code's. Read from the last package name on that line, so a line is scanned once.
_CALLS_PACKAGE = (r"(?<![\w.])" + _PACKAGES + r"(?:\.\w+)+\((?:(?!" + _PACKAGES + r"\.)[^\n])*\n"
                  r"(?:(?:\[rank\d+\]: ?)?[ \t]*[~^][ \t~^]*\n)?(?:[\w.@-]+: )?(?:\[rank\d+\]: ?)?"
                  r"TypeError: [\w.<>]*\(\) got an unexpected keyword argument '\w+'")
# accelerate 1.0 removed the Accelerator's (and transformers its TrainingArguments') dataloader keywords that older
# code still passes: the same installed-in-another-version, in Python's TypeError.
# Python's `module 'numpy' has no attribute 'float'` of an installed package's module is the same, never when Python
# says the module is only partially initialized (a script named like the package, or a circular import).
OTHER_VERSION = (CANNOT_IMPORT + r"|No module named '?" + _INSTALLED + r"|(?<!partially initialized )module '" +
                 _PACKAGES + r"(?:\.[\w.]+)?' has no attribute '\w+'|is required for a normal functioning of this "
                 r"module, but found [\w.-]+==|unexpected keyword argument '(?:dispatch_batches|split_batches|"
                 r"even_batches|use_seedable_sampler)'|" + _CALLS_PACKAGE)

# Signatures whose evidence explains every error after it: a launch line the shell cut short ran without the
# arguments that followed the cut, so the script's own error (a usage error, a missing input) comes from it.
CUTS_THE_COMMAND = frozenset({"shell-continuation"})
# Signatures read with the lines before a rank's error too: what tells them may stand only there (a notebook_launcher
# call, IPython's frames above a bare message, wandb's footer, deepspeed.comm's source line, DeepSpeed's warnings).
READS_BEFORE = frozenset({NOTEBOOK_LAUNCHER_FORK, LOCAL_RANK_NEGATIVE, *WANDB_NO_RUN, *MEMORY_READS_BEFORE, DS_COMM_UNSET,
                          *CKPT_READS_BEFORE, *WORLD_READS_BEFORE, *ZERO3_READS_BEFORE})
# Facts about the node that may stand in the lines before a rank's vague error (explain: BEFORE_THE_ERROR).
NODE_FACTS = frozenset({"driver-library-mismatch", "fabric-manager", "gpu-exclusive", "container-gpu",
                        "nccl-unavailable", "open-files-limit", "container-gpu-lost", "libaio-missing",
                        "link-lib-missing", "extensions-dir-permission", "mkl-threading-layer", "driver-insufficient",
                        "dev-shm-permission"})
# What may stand before a rank's vague error: those facts, and a library's own warning about the very call that failed
# (NCCL's WARN of a mismatched collective, before torch's `NCCL error ... invalid usage`; its topology's lost device or
# missing path back, a CUDA call its init or SHM transport made, before torch's `internal error` or `unhandled cuda error`).
BEFORE_VAGUE = NODE_FACTS | MEMORY_BEFORE_VAGUE | DATA_BEFORE_VAGUE | {"collective-mismatch", "nccl-topology-net", "nccl-topology-path",
    "nccl-cuda-op-unsupported", "nccl-cumem-host", "nccl-sysfs-pci-path", "nccl-arch-missing", "nccl-stream-other-device",
    "nccl-bootstrap-connect", "nccl-blackwell-shared-mem", "ib-completion-acs", "efa-security-group",
    "nccl-topo-file-attribute", "nccl-cumem-host-numa", "bootstrap-message-truncated", "nccl-null-comm"}

MESSAGE_SIGNATURES: tuple[Signature, ...] = (
    # What the shell ran as a command was an argument of the launch line: `--flag: command not found`,
    # `key=value: command not found`, `$'\r': command not found` (a CRLF script). Everything the launcher then
    # did ran without the arguments that followed, so this explains any error after it (explain.CUTS_THE_COMMAND).
    _sig("shell-continuation", r"(?:^|[\s:：'\"])(?:\$?'?(?:--?[A-Za-z][\w.-]*(?:=[^\s:：'\"]*)?|[A-Za-z_][\w.]*=[^\s:：'\"]*)"
         r"(?:\\r)?'?)" + NOT_FOUND,
         "The launch command was cut short by the shell: a line continuation broke (a space or a Windows \\r after "
         "the backslash, a script saved with CRLF line endings, or a missing backslash), so the launcher ran without "
         "the arguments that followed and the shell then tried to run them as commands.",
         "End every continued line with a backslash and nothing after it, convert the script to Unix line endings "
         "(dos2unix script.sh, or sed -i 's/\\r$//' script.sh), then launch again.", retry=False),
    _sig("precision-unsupported", r"bf16 is not supported|bfloat16 is only supported on gpus? with compute capability|"
         r"Bfloat16 is only supported on GPUs|" + DEVICE_NO_BF16 + "|"
         r"Type (?:fp16|bf16|bfloat16) is not supported|bf16 mixed precision requires|"
         r"CUBLAS_STATUS_NOT_SUPPORTED when calling `?cublas\w*\([^\n]{0,200}?CUDA_R_16BF",
         "The device cannot compute in the precision the run asks for: bf16 needs a GPU of compute capability 8.0 or "
         "newer (A100, RTX 30xx/40xx, H100); V100, T4, RTX 20xx, TITAN and older GPUs do not have it, DeepSpeed's fp16 "
         "needs 7.0, and its CPU accelerator (a machine with no GPU DeepSpeed can use) has no fp16 at all.",
         "Use a precision the device supports: fp16 instead of bf16 (in ds_config bf16.enabled false and fp16.enabled "
         "true, or --fp16 instead of --bf16), fp32 where fp16 is not supported either (bf16 or fp32 on CPU); or "
         "run on GPUs of compute capability 8.0+ (nvidia-smi --query-gpu=compute_cap --format=csv).", retry=False),
    _sig("zero-ckpt-world-size", r"checkpoint being loaded used a DP world size of \d+ but the current world size is|"
         r"Automatic adjustment of ZeRO's optimizer state partitioning",
         "The ZeRO checkpoint was saved at another data-parallel world size (number of GPUs) than this run has; "
         "DeepSpeed cannot re-partition its optimizer state to the new size.",
         "Resume with the same number of GPUs (nodes x GPUs per node) as when it was saved; or convert it to a "
         "universal checkpoint (python -m deepspeed.checkpoint.ds_to_universal, then "
         "checkpoint.load_universal true in ds_config), or extract the weights with zero_to_fp32.py and start a new optimizer.",
         retry=False),
    _sig("ds-hf-mismatch", r"DeepSpeed config values that mismatch\s*\n?\s*TrainingArguments|^- ds [\w.]+=\S* vs hf ",
         "The ds_config contradicts the Trainer's arguments (each '- ds X vs hf Y' line names one); a number given "
         "as a string (\"8\") counts as different too.",
         "Set those ds_config keys to \"auto\" so the Trainer fills them in, or make them equal to the command-line "
         "arguments (numbers as numbers).", retry=False),
    *CHECKPOINT_SIGNATURES,
    # A checkpoint that cannot be read at all (torch.load's zip reader, safetensors' header, pickle's first byte: a
    # save cut short, an interrupted download, a Git LFS pointer in place of the weights), and one that reads but does
    # not fit the model (load_state_dict's own report of keys and shapes).
    _sig("ckpt-corrupt", r"PytorchStreamReader failed reading (?:zip archive|file)|failed finding central directory|"
         r"(?:SafetensorError|Exception): Error while deserializing header|unexpected EOF, expected \d+ more bytes|"
         r"UnpicklingError: invalid load key",
         "A checkpoint or weights file is incomplete or not in its loader's format: a save cut short (full disk, killed "
         "rank), an interrupted download, a Git LFS pointer, or a torch.save file given to safetensors (or the reverse).",
         "Resume from an earlier complete checkpoint (move the broken one aside; `dscluster ckpt verify` checks one), "
         "download the weights again (git lfs pull, then compare sizes or checksums), or read the file with its own "
         "format's loader; free disk space before the next save.", retry=False),
    # ... and torch.distributed.checkpoint's planner (default_planner.py: "Missing key ..."; "Size mismatch between saved").
    _sig("ckpt-model-mismatch", r"Error\(s\) in loading state_dict for|(?:Missing|Unexpected) key\(s\) in state_dict|"
         r"unexpected key \"[^\"\n]{1,300}\" in state_dict|size mismatch for [\w.]+: copying a param with shape|"
         r"Missing key in checkpoint state_dict: [\w.]+|Size mismatch between saved [^\n]{1,80}? and current",
         "The checkpoint does not fit the model it is loaded into: a model of another configuration or size, keys saved "
         "through a wrapper (DataParallel/DDP's `module.` prefix), or parameters that ZeRO-3 has partitioned (shape "
         "[0]) loaded without DeepSpeed's loader.",
         "Build the model with the configuration the checkpoint was saved with; save and load the unwrapped model "
         "(model.module.state_dict()) or strip the `module.` prefix; under ZeRO-3 load through the engine's "
         "load_checkpoint or consolidate with zero_to_fp32.py first. A restart fails the same way.", retry=False),
    HUB_RATE_LIMITED,  # the Hub's 429 (sighf.py), before the "We couldn't connect" transformers wraps it in
    # The Hugging Face Hub unreachable from the node, in transformers' and huggingface_hub's words and the HTTP
    # client's (a name that does not resolve, a connection that times out) about the Hub's host.
    _sig("hub-unreachable", r"We couldn't connect to '?https?://[\w.-]+|LocalEntryNotFoundError|"
         r"cannot find the requested files in the (?:local cache|cached path)|"
         + then(r"huggingface\.co|hf-mirror\.com", r"Failed to resolve|NameResolutionError|Network is unreachable|"
                r"Max retries exceeded|timed out") + "|"
         + then(r"Failed to resolve|Max retries exceeded", r"huggingface\.co|hf-mirror\.com"),
         "A rank asked the Hugging Face Hub for a model, tokenizer or dataset file and could not reach it (no internet "
         "on the node, or a proxy or DNS that blocks huggingface.co), and the file is not in the local cache.",
         "Download the files once where the Hub is reachable (huggingface-cli download NAME, or save_pretrained to a "
         "directory) onto storage every node sees, load them by that path, and set HF_HUB_OFFLINE=1 for every rank; "
         "or give the nodes a way out (HTTPS_PROXY, or HF_ENDPOINT for a mirror).", retry=False),
    # Intel MKL's mkl-service when GNU OpenMP is already loaded (numpy/MKL and torch from different channels).
    _sig("mkl-threading-layer", r"MKL_THREADING_LAYER=\w+ is incompatible with lib[\w.-]+",
         "Intel MKL's threading layer conflicts with the GNU OpenMP (libgomp) already loaded in the process (numpy/MKL "
         "and torch installed from different channels), and mkl-service stops the process.",
         "Set MKL_THREADING_LAYER=GNU for every rank (in the launcher's environment, .deepspeed_env for remote ones), "
         "or install numpy and torch from the same channel; the same environment on every node.", retry=False),
    # DeepSpeed's op builder for async_io (NVMe offload) without libaio, and its assertion when the op is needed.
    _sig("libaio-missing", r"async_io requires the (?:dev )?libaio|async_io requires the libraries: \['libaio|"
         r"Unable to (?:JIT load the|pre-compile) async_io",
         "DeepSpeed's async_io op (NVMe offload, and building every op with DS_BUILD_OPS=1) needs libaio's development "
         "files (libaio.so and libaio.h), which this node does not have or the compiler does not find.",
         "Install libaio's development package on every node (apt install libaio-dev, dnf install libaio-devel; with "
         "conda's libaio set CFLAGS/LDFLAGS to its include and lib), or do without it: DS_BUILD_AIO=0 when pre-building "
         "the ops, no NVMe offload in ds_config.", retry=False),
    # The linker's words for a library it was told to link and did not find (GNU ld, lld; MSVC's code LNK1181).
    _sig("link-lib-missing", r"\bcannot find -l[\w.+-]+|unable to find library -l[\w.+-]+|\bLNK1181\b",
         "A build could not link: the linker found no library it was told to use (-lcuda, -lcurand, -lcudart...), so a "
         "DeepSpeed op, a Triton kernel or an extension failed to build. The library is missing on that node, or "
         "installed where the linker does not look (the CUDA toolkit's lib64, the driver's libcuda.so.1 without a "
         "libcuda.so link).",
         "Install the library on every node (the CUDA toolkit for libcurand/libcudart) and point the linker at it: "
         "LIBRARY_PATH and LD_LIBRARY_PATH to its directory (e.g. /usr/local/cuda/lib64, lib64/stubs for libcuda), or "
         "an /etc/ld.so.conf.d entry and ldconfig (TRITON_LIBCUDA_PATH for Triton); then clear "
         "~/.cache/torch_extensions and launch again.", retry=False),
    # A JIT build's or kernel cache's directory that this user cannot write (another user's /tmp/torch_extensions,
    # a container whose HOME is not writable), in Python's, the C library's and the shell's words.
    _sig("extensions-dir-permission", then(r"Permission denied|\[Errno 13\]|Read-only file system|\[Errno 30\]",
                                           r"torch_extensions|\.triton\b|triton_cache|torchinductor"),
         "A JIT build or kernel cache directory is not writable by this user: /tmp/torch_extensions (or Triton's "
         "~/.triton, inductor's cache) was created by another user on a shared machine, or the container's HOME is "
         "not writable.",
         "Give every user (and the container's user) a writable cache: TORCH_EXTENSIONS_DIR=/tmp/$USER/torch_extensions, "
         "TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR likewise, or a writable HOME; set them for every rank "
         "(.deepspeed_env for remote ones).", retry=False),
    *MEMORY_SIGNATURES, *TORCH_SIGNATURES,
    *MODEL_SIGNATURES, *ELASTIC_SIGNATURES, *NUMERIC_SIGNATURES,
    *RLHF_SIGNATURES,
    *COMPILE_SIGNATURES,
    *STORAGE_SIGNATURES,
    *DATA_SIGNATURES,
    *WORLD_SIGNATURES,
    *TRAINING_SIGNATURES, *TRACKING_SIGNATURES,
    *DEEPSPEED_SIGNATURES, *DS_SOURCE_SIGNATURES,
    *HF5_SIGNATURES, *SETUP_SIGNATURES,
    *FRAMEWORK_SIGNATURES,
    *HF_SIGNATURES,
    *FINETUNE_SIGNATURES,
    *LIBRARY_SIGNATURES, *PROCESS_SIGNATURES, *ACCELERATE_SIGNATURES,
    *FABRIC_SIGNATURES,
    *CONTAINER_SIGNATURES,
    *DEVICE_SIGNATURES,
    *PARALLEL_SIGNATURES,
    *CCL_SIGNATURES, *OUTPUT_SIGNATURES,
    # The dynamic loader's words, in English or as glibc's zh_CN catalog prints them (full-width colons or not).
    _sig("loader-lib-missing", r"(?:error while load(?:ing|ed) shared librar(?:y|ies)|加载共享库时出错) ?[:：]? ?[^\s:：]{1,200}? ?[:：]? ?"
         r"(?:cannot open shared object file|无法打开共享对象文件|\.?No such file)",
         "A program could not start: the dynamic loader did not find a shared library it needs on that node. A "
         "program started over ssh (Open MPI's orted, pdsh's remote command, a rank on another node) gets no login "
         "profile, so a LD_LIBRARY_PATH set there (module load, conda activate) is missing.",
         "Make the library findable without a login shell on every node: install it system-wide or add its "
         "directory under /etc/ld.so.conf.d/ and run ldconfig, or pass it on (an MPI launcher's -x LD_LIBRARY_PATH or "
         "--prefix; LD_LIBRARY_PATH in .deepspeed_env for pdsh).", retry=False),
    _sig("lib-version-missing", r"version `?(?:GLIBC(?:XX)?|CXXABI)_[\d.]+'? not found",
         "A compiled library needs a newer C/C++ runtime than the one loaded: the libstdc++ or glibc found first "
         "(the system's, or an older copy inside an environment) lacks the version the message names.",
         "Install a newer libstdc++ in that environment (conda install -c conda-forge libstdcxx-ng, or the OS's gcc "
         "runtime), put the directory holding the newer one first in LD_LIBRARY_PATH, or install builds made for "
         "this OS; the same on every node.", retry=False),
    # Accelerate's own refusal (accelerate/state.py, PartialState, after utils.environment.check_cuda_p2p_ib_support
    # finds RTX 3090/4000-series cards and NCCL_P2P_DISABLE/NCCL_IB_DISABLE unset): "Using RTX 4000 series doesn't
    # support faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and ..."; "RTX 3090 or
    # 4000 series" in the releases that also checked the 3090.
    _sig("p2p-unsupported", r"peer access is not supported between these two device|cudaErrorPeerAccessUnsupported|"
         r"Cuda failure 217\b|cudaIpcOpenMemHandle failed|Failed to open CUDA IPC handle|"
         r"Using RTX (?:3090 or )?4000 series doesn't support faster communication broadband via P2P or IB",
         "GPU peer-to-peer access between two GPUs of a node is not available: the GPUs or the PCIe topology do not "
         "support it (consumer cards such as RTX 3090/4090, virtual machines, IOMMU/ACS), or containers cannot "
         "share CUDA IPC between ranks.",
         "Set NCCL_P2P_DISABLE=1 for every rank (in the launcher's environment, .deepspeed_env for remote ranks), and "
         "if it still fails NCCL_SHM_DISABLE=1 or NCCL_CUMEM_HOST_ENABLE=0 (NovaSky-AI/SkyRL#108, ray-project/ray#64109); "
         "start containers with --ipc=host; check the topology with nvidia-smi topo -m.", retry=False),
    _sig("duplicate-gpu", r"Duplicate GPU detected : rank \d+ and rank \d+ both on CUDA device",
         *sigcauses.DUPLICATE_GPU, retry=False),
    _sig("no-kernel-image", r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice",
         "A compiled CUDA kernel (in torch, a DeepSpeed op or an extension) was not built for this GPU's "
         "architecture: a build for other GPUs, or a GPU older than the build supports.",
         "Install builds that include this GPU's architecture (torch for its CUDA), and rebuild DeepSpeed ops and "
         "extensions for it (TORCH_CUDA_ARCH_LIST naming it, after clearing ~/.cache/torch_extensions).",
         retry=False),
    _sig("nvcc-arch-unsupported", r"nvcc fatal\s*:\s*Unsupported gpu architecture|Unsupported gpu architecture 'compute_",
         "The CUDA toolkit's nvcc on the node is older than the GPU's architecture, so the op build fails.",
         "Install a CUDA toolkit new enough for the GPU (11.8+ for sm_89/sm_90) with the CUDA major version torch "
         "uses, point CUDA_HOME at it, or set TORCH_CUDA_ARCH_LIST to an architecture this nvcc knows; clear "
         "~/.cache/torch_extensions.", retry=False),
    # DDP's reducer when a parameter's gradient hook fires twice in one backward (PyTorch's own message).
    # DeepSpeed's assertion when deepspeed.comm is used before its backend exists (without it: sigdssource.DS_COMM_UNSET).
    _sig("ds-comm-not-initialized", r"DeepSpeed backend not set, please initiali[sz]e it",
         *sigcauses.DS_COMM_NOT_INITIALIZED, retry=False),
    # Accelerate's launch-time checks of its config against the machine.
    _sig("accelerate-config", r"Less than two GPU ids were configured and tried to run on",
         "The Accelerate config does not fit the launch: it asks for multi-GPU training (distributed_type MULTI_GPU) "
         "with fewer than two GPU ids (gpu_ids).",
         "Run `accelerate config` again (or edit its yaml): list at least two gpu_ids or 'all' for multi-GPU, or set "
         "distributed_type NO with num_processes 1 for one GPU; or pass --gpu_ids/--num_processes on the command line.",
         retry=False),
    _sig("ddp-reentrant-checkpoint", r"Expected to mark a variable ready only once|has been marked as ready twice",
         "DistributedDataParallel saw the same parameter's gradient arrive twice in one backward pass: most often "
         "reentrant activation checkpointing (torch.utils.checkpoint with use_reentrant=True, the Trainer's "
         "--gradient_checkpointing) under DDP, or a parameter used by several forward passes before one backward.",
         "Use non-reentrant checkpointing (gradient_checkpointing_kwargs={\"use_reentrant\": False}, or "
         "torch.utils.checkpoint(..., use_reentrant=False)), or DDP(static_graph=True) when the graph does not change, "
         "or DeepSpeed ZeRO instead of DDP; reentrant checkpointing with find_unused_parameters=True (the Trainer's "
         "--ddp_find_unused_parameters true) fails so too: turn that off. TORCH_DISTRIBUTED_DEBUG=DETAIL names the "
         "parameter.", retry=False),
    # torch.distributed's env:// rendezvous, and a script's own os.environ lookup, of the variables a launcher sets.
    _sig("not-launched", r"environment variable (?:RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK) expected, but "
         r"not set|env:// rendezvous: (?:RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT) not set|" + ENV_KEY_MISSING,
         "The script expected the variables a distributed launcher sets for each rank (RANK, LOCAL_RANK, WORLD_SIZE, "
         "MASTER_ADDR, MASTER_PORT) and they were not there: it was started as a plain python process rather than by "
         "torchrun, deepspeed or accelerate launch, or by a launcher that does not set that one (Open MPI's sets "
         "OMPI_COMM_WORLD_* instead).",
         "Start it through a launcher (dscluster launch, deepspeed script.py, torchrun --nproc_per_node N script.py); "
         "under an MPI launcher or a scheduler's step launcher without one, set the variables from its own (LOCAL_RANK="
         "$OMPI_COMM_WORLD_LOCAL_RANK under Open MPI, RANK from the scheduler's task id, ...).", retry=False),
    # EMFILE, in the C library's words (any language, strerror.py) and Python's errno, and torch's DataLoader message that names the limit.
    _sig("open-files-limit", EMFILE + r"|\[Errno 24\]|\bEMFILE\b",
         "A process reached its open-files limit (ulimit -n): DataLoader workers hand every batch's tensors over as "
         "file descriptors, and many workers, ranks or open data files use them up.",
         "Raise the limit for the run (ulimit -n 65536 in the launching shell, LimitNOFILE for a systemd unit, "
         "--ulimit nofile=65536:65536 for a container, nofile in /etc/security/limits.conf), or call "
         "torch.multiprocessing.set_sharing_strategy(\"file_system\") at the start of the script, or use fewer "
         "DataLoader workers.", retry=False),
    # torch DDP's Reducer: its error, the lines it adds naming the parameters without a gradient (their indices; their
    # names under TORCH_DISTRIBUTED_DEBUG=INFO/DETAIL), which a log may show alone.
    _sig("ddp-unused-params", r"Expected to have finished reduction in the prior iteration before starting a new one|"
         r"Parameter(?:s| indices) which did not receive grad for rank \d+",
         "DistributedDataParallel met parameters that took no part in the loss (a layer defined but not used, a "
         "branch not taken, a path cut by .detach() or a .sample() meant as .rsample(), a layer replaced on "
         "model.module after DDP(...) wrapped it: DDP reduces the old one), so its gradient reduction never finished.",
         "Use every parameter in the loss (a latent that must train its encoder: .rsample(), not .sample()), or pass "
         "find_unused_parameters=True to DistributedDataParallel (Trainer: --ddp_find_unused_parameters true); freeze "
         "(requires_grad=False) what is not trained; change the model (freeze layers, a new head) before wrapping it "
         "in DDP, never after: a new layer's gradients are not averaged.", retry=False),
    # Lightning's DDPStrategy/DDPSpawnStrategy.on_exception (src/lightning/pytorch/strategies/ddp.py, ddp_spawn.py,
    # since 2.0) replace that reducer error's message with their own, naming their strategy settings.
    _sig("ddp-unused-params", r"It looks like your LightningModule has parameters that were not used in producing the loss",
         "Lightning trains with DDP over several GPUs and the LightningModule has parameters that took no part in the "
         "loss training_step returned (a layer defined but not used, a branch not taken), so DDP's gradient reduction "
         "never finished.", "Use every parameter in the loss, or turn on DDP's unused-parameter detection: "
         "Trainer(strategy=\"ddp_find_unused_parameters_true\") or strategy=DDPStrategy(find_unused_parameters=True); "
         "freeze (requires_grad=False) what is not trained. A restart fails the same way.", retry=False),
    _sig("no-gpu", r"Found no NVIDIA driver on your system|No CUDA GPUs are available|"
         r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|Torch not compiled with CUDA|"
         r"ProcessGroupNCCL is only supported with GPUs, no GPUs found|nvml error: driver not loaded|"
         # DeepSpeed's launcher without a hostfile, counting the local CUDA devices: none
         r"Unable to proceed, no GPU resources available|" + CUDA_NOT_BUILT + r"|"
         # transformers' TrainingArguments and accelerate asked for fp16 on a process without a CUDA device
         r"_full_eval`?\) can only be used on CUDA|fp16 mixed precision requires a GPU|" + BF16_NO_GPU,
         *sigcauses.NO_GPU, retry=False),
    _sig("loss-scale-minimum", r"Current loss scale already at minimum|Minimum loss scale reached \(",
         "fp16 training overflowed at every step until the dynamic loss scale reached its minimum: the model's "
         "values do not fit fp16 (often a model pre-trained in bf16), or the learning rate is too high.",
         "Train in bf16 on GPUs that support it (compute capability 8.0+), or lower the learning rate, add warmup "
         "and gradient clipping; check the data for broken samples. From the same checkpoint it overflows again.",
         retry=False),
    _sig("package-too-old", r"requires `?[A-Za-z][\w.-]*\s*>=\s*\d[\w.]*`?|"
         r"(?<![\w.-])[A-Za-z][\w.-]*>=\d[\w.]* is required for a normal functioning of this module|"
         # transformers' auto classes: a model_type this version does not know (its message, or the mapping's KeyError)
         r"does not recognize this architecture|configuration_auto\.py\", line \d+, in __getitem__",
         "An installed package is older than the code or the model requires: the message names the package and the "
         "minimum version, or a model architecture (model_type) that this transformers does not know yet.",
         "Install that version in the node image or venv on every node (pip install -U \"PACKAGE>=VERSION\"), "
         "restart the Python process (a notebook kernel keeps the old module loaded), and check with pip show.",
         retry=False),
    # DeepSpeed's own checks that refuse a combination of features, and transformers' "DeepSpeed Zero-3 is not compatible
    # with ... device_map" (sigwords.DS_INCOMPATIBLE). Not pipeline parallelism alone (session 25's third review):
    # Megatron's, torchtitan's and vLLM's refusals of their own features say the same; nor offload alone (review 46).
    _sig("ds-incompatible", DS_INCOMPATIBLE,
         "DeepSpeed refused a combination of features: the message names one that does not work with the ZeRO stage, "
         "pipeline parallelism or offload the ds_config turns on (e.g. gradient accumulation through no_sync() with "
         "ZeRO-3).",
         "Change the ds_config or the script so the two are not used together (another ZeRO stage, offload off, or "
         "without the feature the message names; with ZeRO-2/3 let DeepSpeed accumulate gradients through "
         "gradient_accumulation_steps instead of no_sync(): Accelerate 1.9 and later, also under the HF Trainer, leave "
         "no_sync() out there, older ones call it and DeepSpeed 0.16 and later refuse it); a restart fails the same way.",
         retry=False),
)

# Placed right after rank 0's store out of reach (master-unreachable) in the table, before the symptoms of other
# ranks: torch's rendezvous store could not be used, without saying why (the store's address out of reach, rank 0 not
# up yet: not started, or busy past the timeout, a 30-minute client wait being the process group's; another job on the
# same endpoint). The words are the same in every case, so it names them all (a symptom, not a cause); a connect()
# that timed out is the network's (master-unreachable).
STORE_SYMPTOMS: tuple[Signature, ...] = (
    _sig("store-connection", r"connection to the C10d store has failed|RendezvousConnectionError|"
         r"client socket has timed out after (?:\d{4,}s|\d{7,}ms)\b",
         "A rank could not use the rendezvous store (torch's c10d/TCP store at the rendezvous endpoint, "
         "MASTER_ADDR:MASTER_PORT): it was out of reach, not up yet (rank 0 not started, or still busy loading data "
         "or a model past the timeout), or another job was using the same rendezvous endpoint and port.",
         "Give each job its own rendezvous port (dscluster picks a fresh one per attempt; with torchrun a distinct "
         "--rdzv_endpoint or --master_port per job), check that the first node's address resolves and is reachable "
         "from every node (`dscluster doctor`), and prepare data before the ranks start or raise the timeout if rank "
         "0 takes long to join.", symptom=True),
)


def with_store(table: tuple[Signature, ...]) -> tuple[Signature, ...]:
    """The table with STORE_SYMPTOMS right after master-unreachable (the core table's, the last of that name: PyTorch's
    own table names a MASTER_ADDR that does not resolve so too, earlier)."""
    at = max(i for i, s in enumerate(table) if s.name == "master-unreachable") + 1
    return (*table[:at], *STORE_SYMPTOMS, *table[at:])

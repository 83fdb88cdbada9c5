"""Failure signatures read in DeepSpeed's own words and in the words of what it loads (round 23 of issue 45, logs from
DeepSpeed's own repositories): DeepSpeed looking for MPI because no launcher set the ranks, an extension linked without
the CUDA library whose function it calls, a bug in an installed library's own code, a ZeRO-3 parameter used while
partitioned, NVMe offload without a path, and zero_to_fp32.py's count of a checkpoint's partitions that does not add up.
Each pattern is the wording of the component that prints it (DeepSpeed's comm.py, partition_parameters.py and
zero_to_fp32.py, the dynamic loader's `undefined symbol`, CPython's NameError, torch's shape checks), never one log's;
`retry=False` throughout: the same command meets the same cause again. sigmessages.py places this table in its own,
before the frameworks' and after the training stack's. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster import sigwords
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# Python's error for mpi4py itself (not a submodule, not another package whose name starts so), and a traceback's last
# code line (3.11's carets under it).
_MPI4PY = r"(?:\w+: )?No module named '?mpi4py'?(?![\w.])"
_CODE_LINE = r"[^\n]*\n(?:[ \t]*[~^][~^ \t]*\n)?"

DEEPSPEED_SIGNATURES: tuple[Signature, ...] = (
    # DeepSpeed's init_distributed, when RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT or LOCAL_RANK is missing, prints
    # "Not using the DeepSpeed or dist launchers, attempting to detect MPI environment..." and calls mpi_discovery
    # (deepspeed/comm/comm.py; deepspeed/utils/distributed.py before 0.6), whose first line is `from mpi4py import
    # MPI`: mpi4py is not among DeepSpeed's requirements, so a process no launcher started stops at its import. The
    # INFO line alone is no failure (under an MPI launcher the discovery then succeeds): only the import's error, raised
    # in DeepSpeed's own frame (comm.py's or utils/distributed.py's mpi_discovery), after that INFO line, or printed with
    # no frame above it. Never where the script's own code (or another library) imports mpi4py: it is not installed.
    _sig("not-launched", r"[/\\]deepspeed[/\\](?:comm|utils)[/\\]\w+\.py\", line \d+, in \w+\n" + _CODE_LINE + _MPI4PY + r"|(?:\A|"
         r"^(?![ \t])[^\n]*\n)" + _MPI4PY + r"|attempting to detect MPI environment[\s\S]{0,4000}?" + _MPI4PY,
         "DeepSpeed looked for the ranks in an MPI job, which it does only when the variables a launcher sets (RANK, "
         "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) are missing: the script was started as a plain python "
         "process (or by a launcher that does not set them), and mpi4py, which that MPI discovery imports, is not "
         "installed.",
         "Start it through a launcher that sets the ranks (dscluster launch, deepspeed script.py, torchrun "
         "--nproc_per_node N script.py, accelerate launch --use_deepspeed); install mpi4py only when the job is "
         "really started by an MPI launcher (or uses DeepSpeed's MPI communication backend).", retry=False),
    # The dynamic loader's "undefined symbol: NAME" (glibc's dl-lookup) for a C function of a CUDA library, by the
    # prefix of its API (cuRAND's curandCreateGenerator, cuBLAS's cublasCreate_v2/cublasLt*, cuSPARSE, cuSOLVER,
    # cuFFT, cuDNN, the runtime's cudaMalloc): the extension calls it and was not linked with that library. Not in
    # torch's own libraries (libtorch_cuda.so was linked; a symbol missing there is an older library loaded), nor a
    # versioned symbol (", version libcublasLt.so.11": linked, an older copy loaded), nor NCCL's (torch's ncclCommRegister
    # against an older libnccl); a C++ (mangled, _Z...) symbol of torch's own stays undefined-symbol: another torch.
    _sig("link-lib-missing", r"(?<!libtorch_cuda\.so: )(?<!libtorch_cpu\.so: )(?<!libtorch\.so: )undefined symbol: "
         r"(?:curand|cublas(?:Lt)?|cusparse(?:Lt)?|cusolver|cufft|cudnn|cuda|nvrtc|nvJitLink)[A-Z_]\w*(?![\w,])",
         "A compiled extension (a DeepSpeed op, a kernel library) calls a function of a CUDA library (cuRAND for "
         "curand*, cuBLAS for cublas*, NCCL, the CUDA runtime...) that it was not linked with, so loading it fails: "
         "it was built without -l for that library (a build script that omits it, as DeepSpeed's pre-built "
         "transformer_inference op once did with libcurand), or that library is not on the node's library path.",
         "Rebuild the extension linked with that library (for a DeepSpeed op: a DeepSpeed release that links it, "
         "or JIT-build it instead of pre-building, after clearing ~/.cache/torch_extensions), with the CUDA "
         "toolkit's lib64 on LD_LIBRARY_PATH on every node.", retry=False),
    # CPython's `NameError: name 'X' is not defined`, raised on a line of an installed package's own file (its frame
    # under site-packages or dist-packages is the innermost): that version of the package uses a name it never
    # defined, a bug of the release (DeepSpeed 0.3's mpi_discovery used `dist` without importing it).
    _sig("package-too-old", r"[/\\](?:site|dist)-packages[/\\][\w.-]+[/\\][^\n]*\", line \d+, in [\w<>]+\n[^\n]*\n"
         r"(?:[\w.@-]+: )?(?:\[rank\d+\]: ?)?NameError: name '\w+' is not defined",
         "An installed package failed in its own code: a line of the package (the last frame, under site-packages) "
         "uses a name that this release of it never defines, a bug of that version, not of the script.",
         "Install a release of that package with the fix (pip install -U PACKAGE; its issue tracker names the "
         "release) or the version the code was written for, the same on every node.", retry=False),
    # The family of siglibs.py's `'weight' must be 2-D` (an embedding's), in torch's other words for a weight that is
    # not a matrix: addmm's "tensors must be 2-D" under F.linear. Under ZeRO-3 each rank keeps its parameters
    # partitioned, as empty 1-D placeholders, until DeepSpeed gathers them for a module's forward (deepspeed.zero.Init,
    # partition_parameters.py). (load_state_dict's "the shape in current model is torch.Size([0])" is the same cause;
    # ckpt-model-mismatch, earlier in the table, answers it.)
    _sig("zero3-param-partitioned", sigwords.LINEAR_NOT_2D,
         "A parameter was used while DeepSpeed ZeRO-3 had it partitioned: each rank holds its parameters as empty 1-D "
         "placeholders until the engine gathers them for a module's forward, so a module run outside the engine's "
         "forward (a model not wrapped by deepspeed.initialize, a weight read directly) or a state dict loaded into "
         "the partitioned model meets a tensor without the weight's shape.",
         "Run the model through the engine deepspeed.initialize returned, gather parameters used outside it with "
         "deepspeed.zero.GatheredParameters, load weights with from_pretrained (which knows ZeRO-3) rather than "
         "load_state_dict into a partitioned model, or use ZeRO stage 2.", retry=False),
    # DeepSpeed's zero.Init (partition_parameters.py, _validate_remote_device): `"nvme_path" in DeepSpeed Config cannot
    # be None if remote device is nvme` (older releases: `nvme_path in DeepSpeed Config cannot be None ...`).
    _sig("ds-config-invalid", r"nvme_path\"? in DeepSpeed Config cannot be None if remote device is",
         "The ds_config offloads ZeRO-3's parameters to NVMe (offload_param.device \"nvme\") without naming where: "
         "DeepSpeed needs offload_param.nvme_path (and offload_optimizer.nvme_path for the optimizer) for an NVMe "
         "device.",
         "Set nvme_path in ds_config to a directory on a local NVMe disk (with room and write permission, on every "
         "node), or offload to \"cpu\" instead of \"nvme\"; launch again.", retry=False),
    # Round 51: DeepSpeed's MPI-based launcher backends (deepspeed/launcher/multinode_runner.py: OpenMPIRunner,
    # MPICHRunner, IMPIRunner, SlurmRunner, MVAPICHRunner; validate_args) take the ranks' placement from the hostfile or
    # the scheduler and refuse the runner's own selection: ValueError(f"{self.name} backend does not support limiting
    # num nodes/gpus") for --num_nodes/--num_gpus, "... does not support worker include/exclusion" for
    # --include/--exclude (older releases assert the same words, naming "openmpi"). A wrapper (accelerate launch with
    # deepspeed_multinode_launcher openmpi) may add --num_gpus itself. Read before the core table's ds-include.
    _sig("ds-mpi-launcher-limits", r"\b\w+ backend does not support (?:limiting num nodes/gpus|worker include/exclusion)",
         "DeepSpeed's launcher backend for an MPI launcher or a scheduler (a --launcher other than pdsh) refused the "
         "runner's own node/GPU selection: with these backends the MPI launcher or the scheduler places the ranks "
         "from the hostfile or the allocation, so --num_nodes/--num_gpus (or --include/--exclude) are not allowed. "
         "A wrapper may add them itself (accelerate launch passes --num_gpus with an MPI multinode launcher).",
         "Drop --num_nodes/--num_gpus and --include/--exclude from the deepspeed command (or the wrapper's settings "
         "that produce them) and choose the ranks through the hostfile's slots=N or the allocation; or use the "
         "default pdsh launcher, which honours them. A restart fails the same way.", retry=False),
    # zero_to_fp32.py (deepspeed/utils/zero_to_fp32.py, copied into each checkpoint directory): its sanity check
    # "consumed N numels out of M - something is wrong" when the parameters' shapes do not add up to the saved flat
    # partitions as that script counts their padding and alignment (DeepSpeed 0.5's ZeRO-2 alignment, fixed in
    # deepspeedai/DeepSpeed#1372).
    _sig("package-too-old", r"consumed \d+ numels out of \d+ - something is wrong",
         "zero_to_fp32.py could not rebuild the weights: the parameters' shapes do not add up to the checkpoint's "
         "flat partitions as this version of the script counts their padding and alignment, a bug of the DeepSpeed "
         "version that wrote the script (its ZeRO-2 alignment once went uncounted), or a script of another DeepSpeed "
         "than the one that saved the checkpoint.",
         "Run the zero_to_fp32.py of a newer DeepSpeed (pip install -U deepspeed; python -m "
         "deepspeed.utils.zero_to_fp32 CHECKPOINT_DIR OUTPUT), or the one saved with the checkpoint when it is the "
         "same version; the checkpoint itself is intact.", retry=False),
)

"""Failure signatures read in DeepSpeed's own words and in the words of what it loads (round 23 of issue 45, logs from
DeepSpeed's own repositories): DeepSpeed looking for MPI because no launcher set the ranks, an extension linked without
the CUDA library whose function it calls, a bug in an installed library's own code, a ZeRO-3 parameter used while
partitioned, NVMe offload without a path, and zero_to_fp32.py's count of a checkpoint's partitions that does not add up.
Each pattern is the wording of the component that prints it (DeepSpeed's comm.py, partition_parameters.py and
zero_to_fp32.py, the dynamic loader's `undefined symbol`, CPython's NameError, torch's shape checks), never one log's;
`retry=False` throughout: the same command meets the same cause again. sigmessages.py places this table in its own,
before the frameworks' and after the training stack's. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py). Round 48 (DeepSpeed's own tracker, 2024-2026) added DeepSpeed's code asking one
of its own modules for a function that release does not define, ZeRO-Offload refusing DeepSpeed's own CPU optimizer
as a client one, ZeRO-1/2 given a parameter with no elements, and a ZeRO-1/2 gradient hook run outside the engine's
backward. Round 55 (DeepSpeed's own tracker, 2020-2023) added a compiled op that the install did not build, and a config
value still a string ("auto") where DeepSpeed's runtime compares or counts with it. Round 75 (out-of-memory in multi-GPU
jobs) added a rank killed while the ZeRO checkpoint it read was merged into its optimizer in host memory. Round 107
(DeepSpeed configuration errors) added a fused GPU optimizer handed optimizer state offloaded to the host. Round 103
(ZeRO-3 parameter partitioning) added ZeRO-3's gather meeting parameters of more than one dtype (quantized weights),
and DeepSpeed's scheduler pairing fewer parameter groups than learning rates once the engine dropped an empty group.
Round 113 (MPI-launched training) added the Open MPI launcher backend of 0.16.4-0.18.3 checking the rank variables
of the MPI launcher before it runs it."""

from __future__ import annotations

from dscluster import sigwords
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# DeepSpeed's engine reads a ZeRO checkpoint's optimizer partitions with torch.load(map_location='cpu') (every
# partition, with an elastic checkpoint) and logs "successfully read {n} ZeRO state_dicts for rank {r}"
# (runtime/engine.py _get_all_zero_checkpoint_state_dicts); the optimizer's load_state_dict then merges them in host
# memory, after which it logs "loading {n} zero partition checkpoints for rank {r}" (_load_zero_checkpoint). Its
# launcher, when a rank exits non-zero, logs "Killing subprocess {pid}" for each and then "{cmd} exits with return code
# = {rc}" (launcher/launch.py sigkill_handler); torch elastic logs "failed (exitcode: {rc})". Read: that read, then
# within a few lines, none a traceback nor the load's end, the launcher's kill, with no return code but -9 after it.
# Nor the launcher's own SIGINT or SIGTERM (review 89: Ctrl-C on a load that seemed stuck, a scheduler's cancel or time
# limit): sigkill_handler then kills the ranks and logs "Main process received {SIGINT|SIGTERM}, exiting" (since 0.3.12).
_ZERO_READ = r"successfully read \d+ ZeRO state_dicts for rank \d+[^\n]*\n"
_NOT_THE_END = r"(?![^\n]*(?:Traceback|zero partition checkpoints for rank))"
_KILL_AFTER = (r"(?:sigkill_handler\] Killing subprocess \d+|exits with return code = -9\b|\(exitcode: -9\))"
               r"(?!(?:[^\n]*\n){1,20}?[^\n]*(?:(?:exits with return code = |\(exitcode: )(?!-9\b)-?\d|"
               r"Main process received SIG(?:INT|TERM)\b))")

# Python's error for mpi4py itself (not a submodule, not another package whose name starts so), and a traceback's last
# code line (3.11's carets under it).
_MPI4PY = r"(?:(?<!\w)\w+: )?No module named '?mpi4py'?(?![\w.])"
_CODE_LINE = r"[^\n]*\n(?:[ \t]*[~^][~^ \t]*\n)?"

# A master address as DeepSpeed's runner printed it: empty, or a word no host or IP address is written with (a path, a
# shell's message), what a host name, an IPv4 or IPv6 address (with its %zone, in brackets) never contains.
_NOT_AN_ADDRESS = r"(?:/\S*|[\w.:%\[\]-]*[^\w.:%\[\]\s-]\S*)?"

DEEPSPEED_SIGNATURES: tuple[Signature, ...] = (
    _sig("memcg-oom", _ZERO_READ + r"(?:" + _NOT_THE_END + r"[^\n]*\n){0,8}?" + _NOT_THE_END + r"[^\n]*" + _KILL_AFTER,
         "A rank was killed while DeepSpeed loaded a ZeRO checkpoint into host memory: it had read the optimizer's "
         "partitions (torch.load onto the CPU; every partition with an elastic checkpoint) and was merging them into "
         "the optimizer, a peak of host RAM on top of any CPU-offloaded states that a run started from scratch never "
         "has; the node (or the container's or batch job's limit) ran out and the kernel's OOM killer stopped it.",
         "Give the node more host memory (or swap) for the resume, or run fewer ranks per node; resume without the "
         "optimizer states (load_optimizer_states=False, or load_module_only) if they can be rebuilt; with ZeRO "
         "stage 1/2 and an elastic checkpoint set \"elastic_checkpoint\": false so each rank loads only its own "
         "partition. `free -g` while it loads shows the peak. A restart runs out of memory the same way.", retry=False),
    # DeepSpeed's runner (deepspeed/launcher/runner.py main), given a hostfile and no --master_addr, takes the master
    # address as the first word of what `ssh FIRST_HOST hostname -I` prints and logs "Using IP address of {addr} for
    # node {first_host}"; its PDSH runner (multinode_runner.py) then starts every node with `... --node_rank=%n
    # --master_addr={addr} --master_port=...`. Read where that address is empty or no address at all: the first host's
    # shell startup files print on a non-interactive ssh command (an `echo`, a module's or nvm's message: the word
    # comes first), or its `hostname -I` printed nothing (a container, a pod). Not a host name or an IP address
    # (10.1.2.3, node-1.cluster, [fe80::1%eth0]), however wrong: which host is meant is another question.
    _sig("master-addr-not-address", r"Using IP address of " + _NOT_AN_ADDRESS + r" for node \S|"
         r"--node_rank=%n --master_addr=" + _NOT_AN_ADDRESS + r"(?=\s|$)",
         "DeepSpeed's runner, given a hostfile and no --master_addr, took the master address from what `ssh "
         "FIRST_HOST hostname -I` printed, and got no address (an empty word, a path, a shell's message): the first "
         "host's shell startup files (.bashrc, a sourced script, a module or nvm setup) print text on a "
         "non-interactive ssh command, which comes before the address, or `hostname -I` prints nothing there (a "
         "container or pod without it). The ranks then cannot find the rendezvous.",
         "Pass --master_addr with the first host's training-network IP to deepspeed (accelerate's pdsh launcher "
         "did not pass main_process_ip on before accelerate#2495: check the runner's `cmd =` line, or use the "
         "standard launcher), and keep shell startup files silent for non-interactive shells (guard their echos with "
         "`[[ $- == *i* ]] ||` or move them to .bash_profile); `ssh FIRST_HOST hostname -I` must print only "
         "addresses. A restart fails the same way.", retry=False),
    # DeepSpeed's init_distributed, when RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT or LOCAL_RANK is missing, prints
    # "Not using the DeepSpeed or dist launchers, attempting to detect MPI environment..." and calls mpi_discovery
    # (deepspeed/comm/comm.py; deepspeed/utils/distributed.py before 0.6), whose first line is `from mpi4py import
    # MPI`: mpi4py is not among DeepSpeed's requirements, so a process no launcher started stops at its import. The
    # INFO line alone is no failure (under an MPI launcher the discovery then succeeds): only the import's error, raised
    # in DeepSpeed's own frame (comm.py's or utils/distributed.py's mpi_discovery), after that INFO line, or printed with
    # no frame above it. Never where the script's own code (or another library) imports mpi4py: it is not installed.
    _sig("not-launched", r"[/\\]deepspeed[/\\](?:comm|utils)[/\\]\w+\.py\", line \d+, in \w+\n" + _CODE_LINE + _MPI4PY + r"|(?:\A|"
         r"^(?![ \t])[^\n]*\n)" + _MPI4PY + r"|attempting to detect MPI environment(?:(?!attempting to detect MPI environment)[\s\S]){0,4000}?" + _MPI4PY,
         "DeepSpeed looked for the ranks in an MPI job, which it does only when the variables a launcher sets (RANK, "
         "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) are missing: the script was started as a plain python "
         "process (or by a launcher that does not set them), and mpi4py, which that MPI discovery imports, is not "
         "installed.",
         "Start it through a launcher that sets the ranks (dscluster launch, deepspeed script.py, torchrun "
         "--nproc_per_node N script.py, accelerate launch --use_deepspeed); install mpi4py only when the job is "
         "really started by an MPI launcher (or uses DeepSpeed's MPI communication backend).", retry=False),
    # Round 78: that MPI discovery (deepspeed/comm/comm.py mpi_discovery; utils/distributed.py before 0.6) takes the
    # master address from `hostname -I` on rank 0, as DeepSpeed's elastic agent (elasticity/elastic_agent.py) does:
    # subprocess.check_output(["hostname -I"], shell=True) until 0.15.1, shlex.split("hostname -I") since #6498, so
    # CalledProcessError names the command `['hostname -I']` or `['hostname', '-I']`; 0.16.4 (#6990) falls back to
    # socket.gethostbyname when it fails. A hostname program without -I (GNU inetutils', BusyBox's, macOS/BSD's)
    # exits with a usage error (on Windows cmd.exe finds no program `"hostname -I"`, exit 1): read that exit, or the
    # program's own words (inetutils `invalid option -- 'I'`, BSD `illegal option -- I`) after DeepSpeed's
    # MPI-discovery line. Not the runner's `ssh HOST hostname -I` (the first host unreachable or silent:
    # ssh-unreachable, ds-master-addr-undetected), nor a `hostname -I` killed by a signal (`died with
    # <Signals.SIGSEGV: 11>`: another cause), nor `hostname -i` (lower case: a name that does not resolve), nor a
    # script's own `hostname -I` without DeepSpeed's discovery before it. Case-sensitive -I.
    _sig("ds-mpi-discovery-hostname", r"Command '\[\s*'hostname(?: (?-i:-I)'|',\s*'(?-i:-I)')\s*\]' returned non-zero "
         r"exit status|attempting to detect MPI environment(?:(?!attempting to detect MPI environment)[\s\S]){0,2000}?"
         r"hostname: (?:invalid|illegal) option -- '?(?-i:I)\b",
         "DeepSpeed ran `hostname -I` to find the master address and it failed: this host has no hostname program "
         "that takes -I (GNU inetutils', BusyBox's and macOS's hostname have no -I; on Windows the command does not "
         "run at all). DeepSpeed does this when no launcher set RANK, WORLD_SIZE and MASTER_ADDR (init_distributed's "
         "MPI discovery, for a script started as a plain python process or by an MPI launcher) and in its elastic "
         "agent.",
         "Start the script through a launcher that sets the ranks and MASTER_ADDR (deepspeed script.py, torchrun "
         "--nproc_per_node N script.py), or upgrade DeepSpeed to 0.16.4 or later (its MPI discovery falls back to the "
         "host name's address), or install a hostname with -I on that node (Debian/Ubuntu's hostname package). A "
         "restart fails the same way.", retry=False),
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
    _sig("package-too-old", r"[/\\](?:site|dist)-packages[/\\][\w.-]+[/\\](?:(?![/\\](?:site|dist)-packages[/\\])[^\n])*\", line \d+, in [\w<>]+\n[^\n]*\n"
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
    # Round 103: ZeRO-3's gather of a module's partitioned parameters into one flat buffer (partition_parameters.py,
    # Init._convert_to_deepspeed_param's all_gather_coalesced, 0.8-0.12.2, and _all_gather_coalesced of the all-reduce
    # fetch since) takes its dtype from runtime/utils.py get_only_unique_item(p.dtype for p in params), which raises
    # "expected there to be only one unique element in {items}": its generator's name is that function's. DeepSpeed's
    # own comment (inference/quantization/layers.py): "Zero3 assume all model weights has the same type". Not the same
    # words from zero/utils.py's defragment (a dtype or a device of the optimizer's partitions).
    _sig("zero3-quantized-params", r"expected there to be only one unique element in <generator object "
         r"Init\._convert_to_deepspeed_param\b",
         "DeepSpeed ZeRO-3 gathers a module's partitioned parameters into one flat buffer of a single dtype, and that "
         "module's parameters have more than one: weights quantized by bitsandbytes (load_in_8bit, QLoRA's 4-bit "
         "storage) next to floating-point ones (LoRA adapters, norms), or float32 modules next to bf16/fp16 ones.",
         "Under ZeRO-3 do not load the model 8-bit; for 4-bit QLoRA set bnb_4bit_quant_storage to the compute dtype "
         "(e.g. torch.bfloat16) so every parameter is stored in one dtype; load all weights in one torch_dtype; or use "
         "ZeRO-2. DeepSpeed 0.12.3 and later gather each dtype apart (deepspeedai/DeepSpeed#4647). A restart fails "
         "the same way.", retry=False),
    # Round 103: DeepSpeed's engine drops an optimizer parameter group with no parameters (runtime/engine.py
    # _configure_optimizer: "Removing param_group that has no 'params' in the basic Optimizer"), so learning rates
    # taken per group before (the Trainer's decay/no-decay groups, the second empty with LoRA) outnumber the groups
    # when DeepSpeed's scheduler (runtime/lr_schedules.py) pairs them; CPython's zip(strict=True) says "zip() argument
    # N is longer|shorter than argument(s) M". Read only in a frame of DeepSpeed's lr_schedules.py (the ev line).
    _sig("ds-empty-param-group-lrs", r"[/\\]deepspeed[/\\]runtime[/\\]lr_schedules\.py\", line \d+"
         r"(?:, in [\w<>]+)?[ \t]*\r?\n(?:[^\n]*\n){0,2}?(?:\[rank\d+\]: ?)?"
         r"(?P<ev>ValueError: zip\(\) argument \d+ is (?:longer|shorter) than arguments? \d+(?:-\d+)?)",
         "DeepSpeed's learning-rate scheduler paired the optimizer's parameter groups with one learning rate per group "
         "and the two counts differ: DeepSpeed's engine removes a parameter group that has no parameters, while the "
         "learning rates were listed for every group the optimizer was made with. With LoRA the Trainer's second "
         "group (parameters without weight decay) is empty, since only the adapters train; every ZeRO stage fails so.",
         "Do not give DeepSpeed an empty parameter group: build the optimizer's groups from the trainable parameters "
         "and leave out a group that has none (with LoRA one group is enough), in the script or in a release of the "
         "training framework that does so. A restart fails the same way.", retry=False),
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
    # Round 113: DeepSpeed 0.16.4 to 0.18.3's OpenMPIRunner.validate_args (launcher/multinode_runner.py, #6979) called
    # _setup_mpi_environment, which raises EnvironmentError("MPI environment variables are not set. Ensure you are
    # running the script with an MPI-compatible launcher.") unless OMPI_COMM_WORLD_* are set: they are set by mpirun
    # in the ranks, never in the `deepspeed` command that builds the mpirun line (#7711; #7751 removed the call, 0.18.4).
    # Its frame, or its two sentences; a script's own check that says only the first is the core table's mpi-daemons.
    _sig("ds-open-mpi-env-check", r"multinode_runner\.py\", line \d+, in validate_args[ \t\r]*\n[ \t]*self\."
         r"_setup_mpi_environment\(\)|MPI environment variables are not set\. Ensure you are running the script with "
         r"an MPI-compatible launcher",
         "DeepSpeed's launcher backend for Open MPI (deepspeed --launcher with Open MPI) of releases 0.16.4 to 0.18.3 "
         "checks, before it starts the MPI launcher, that Open MPI's rank variables (OMPI_COMM_WORLD_LOCAL_RANK, "
         "_RANK, _SIZE) are set; the MPI launcher sets them only in the processes it starts, so the `deepspeed` "
         "command fails there for any script, before any rank runs (deepspeedai/DeepSpeed#7711).",
         "Upgrade DeepSpeed to 0.18.4 or newer (pip install -U deepspeed), or install 0.16.3 or older, on the node "
         "that runs the deepspeed command, then launch again; a restart fails the same way.", retry=False),
    # Round 82: DeepSpeed 0.14.1/0.14.2's ZeRO-3 step (runtime/zero/stage3.py, DeepSpeedZeroOptimizer_Stage3.step ->
    # unscale_and_clip_grads) computes the global gradient norm as a GPU tensor (torch.norm(torch.stack(norm_groups)),
    # deepspeedai/DeepSpeed#5256), so with gradient clipping the clip factor is one too, and with the optimizer offloaded
    # the line `self.fp32_partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)` multiplies CPU
    # gradients by it. Reverted in 0.14.3 (#5461: "causing bugs when the ZeRO3 + ZeRO Offload features are enabled");
    # 0.14.5 keeps the offloaded norm on the CPU (#5504). Only that ZeRO-3 line followed within a few lines by torch's
    # device check naming the CPU: ZeRO-1/2's `grad.data.mul_(1. / combined_scale)` (stage_1_and_2.py) and two GPUs
    # named are not this (device-mismatch).
    _sig("ds-offload-grad-norm-device", r"\bfp32_partitioned_groups_flat\[sub_group_id\]\.grad\.mul_\(1\. / "
         r"combined_scale\)[ \t\r]*\n(?:[^\n]*\n){0,4}?[^\n]*Expected all tensors to be on the same device, but found at "
         r"least two devices, (?:cuda:\d+ and cpu|cpu and cuda:\d+)\b",
         "DeepSpeed's ZeRO-3 optimizer step failed in its own code: with the optimizer offloaded to the CPU "
         "(offload_optimizer) and gradient clipping on, unscale_and_clip_grads multiplies the CPU gradients by a clip "
         "factor computed on the GPU. That is a bug of DeepSpeed 0.14.1 and 0.14.2 (its faster global-norm computation, "
         "reverted in 0.14.3), not the script's placement of tensors.",
         "Install another DeepSpeed release on every node: pip install -U deepspeed (0.14.3 or later; 0.14.0 also "
         "works). To keep this release, turn the optimizer offload or gradient clipping (gradient_clipping: 0) off. A "
         "restart fails the same way.", retry=False),
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
    # CPython's `AttributeError: module 'deepspeed.X' has no attribute 'Y'` raised on a line of DeepSpeed's own file
    # (the innermost frame under a deepspeed/ directory, installed or a checkout): DeepSpeed calls a function of one of
    # its own modules that this release does not define (runtime/engine.py's _get_ckpt_name and utils/bwc.py asking
    # the Ulysses runtime/sequence_parallel/parallel_state_sp.py for get_model_parallel_rank, added by
    # deepspeedai/DeepSpeed#7649). Never Python's `partially initialized module` (a circular import: a script named
    # deepspeed.py, or another package importing DeepSpeed half-way), nor another package's module missing a name
    # (`module 'torch.compiler' has no attribute 'is_compiling'` in DeepSpeed's frame is torch in another version:
    # import-name), nor the name asked for by another package's frame.
    _sig("package-too-old", r"[/\\]deepspeed[/\\](?:(?![/\\]deepspeed[/\\])[^\"\n])*\.py\", line \d+, in [\w<>]+\n" + _CODE_LINE +
         r"(?:\[rank\d+\]: ?)?AttributeError: module 'deepspeed(?:\.\w+)*' has no attribute '\w+'",
         "DeepSpeed failed in its own code: one of its files (the last frame) asks one of DeepSpeed's own modules for "
         "a function that module does not define in this release (the engine asking the Ulysses sequence-parallel "
         "module for get_model_parallel_rank when it saves a checkpoint), a bug of that DeepSpeed version, or an "
         "installation mixing files of two versions; not the script's.",
         "Install a DeepSpeed release with the fix (pip install -U deepspeed; the issue in its tracker names the "
         "release), or reinstall it cleanly so all its files are of one version, the same on every node. A restart "
         "fails the same way.", retry=False),
    # DeepSpeed's engine (_configure_basic_optimizer, runtime/engine.py): under ZeRO-Offload with
    # zero_force_ds_cpu_optimizer (the default) it refuses an optimizer that is not `deepspeed.ops.adam.DeepSpeedCPUAdam`
    # ("You are using ZeRO-Offload with a client provided optimizer ({type(basic_optimizer)}) ..."); releases before
    # deepspeedai/DeepSpeed#7531 refused their own DeepSpeedCPULion too, and DeepSpeedCPUAdagrad is not in the check.
    # Only where the class it names is one of DeepSpeed's own CPU optimizers (deepspeed.ops.*.DeepSpeedCPU*): a torch or
    # transformers optimizer, or DeepSpeed's GPU FusedAdam, is the refusal it means (ds-config-invalid).
    _sig("ds-cpu-optimizer-refused", r"You are using ZeRO-Offload with a client provided optimizer \(<class "
         r"'deepspeed\.ops\.[\w.]*\.DeepSpeedCPU(?!Adam')\w+'>\)",
         "The optimizer given with ZeRO-Offload is one of DeepSpeed's own CPU optimizers (CPU Lion, CPU Adagrad), "
         "but this DeepSpeed release's check for ZeRO-Offload accepts only its CPU Adam, so it refused it as a "
         "client optimizer that would be slow; a limit of that check (CPU Lion is accepted since "
         "deepspeedai/DeepSpeed#7531), not a wrong optimizer.",
         "Set \"zero_force_ds_cpu_optimizer\": false in the DeepSpeed config (the optimizer does run on the CPU), or "
         "install a DeepSpeed release that accepts it (pip install -U deepspeed), or name the optimizer in the "
         "config's \"optimizer\" section instead of passing it. A restart fails the same way.", retry=False),
    # Round 107: DeepSpeed's fused GPU optimizers (ops/adam/fused_adam.py, ops/lion's FusedLion) step through
    # multi_tensor_apply (csrc/adam/multi_tensor_apply.cuh, copied from NVIDIA/apex's, whose FusedAdam/FusedLAMB say the
    # same): `TORCH_CHECK(ref_device.type() == at::kCUDA, "expected input to be on cuda")` when the first tensor it is
    # handed is not on the GPU (DeepSpeed's XPU copy keeps the words). Under DeepSpeed that is optimizer state offloaded
    # to the host meeting a GPU optimizer: ZeRO-3's partial offload (offload_optimizer "ratio") with device nvme, which
    # only device cpu supports (deepspeedai/DeepSpeed#4872), or a client FusedAdam with offload_optimizer
    # (Megatron-DeepSpeed without --cpu-optimizer). Only those lower-case words: TransformerEngine's NVTE_CHECK
    # "Expected input to be on CUDA." (its cumsum) and torch's "Expected all tensors to be on the same device" are not it.
    # Review 115: nor ColossalAI's copy of apex's FusedAdam in its frames (colossalai/nn/optimizer/, its multi_tensor_apply
    # under Gemini's optimizer offload: hpcaitech/ColossalAI#6388), where no DeepSpeed config is there to change.
    _sig("ds-fused-optimizer-cpu-tensor",
         r"\A(?![\s\S]*?\bcolossalai[/\\](?:nn[/\\]optimizer|utils[/\\]multi_tensor_apply)[/\\])"
         r"[\s\S]*?(?P<ev>(?-i:\bexpected input to be on cuda)\b(?![:.\w]))",
         "A fused GPU optimizer (DeepSpeed's or apex's FusedAdam, FusedLamb or FusedLion, which update the parameters "
         "through one CUDA kernel over lists of tensors) was handed tensors that are not on the GPU: with DeepSpeed, "
         "optimizer states offloaded to the host (offload_optimizer) met a GPU optimizer, as ZeRO-3's partial offload "
         "(offload_optimizer \"ratio\") does with device nvme, which it does not support, or a client FusedAdam does "
         "with offload on; without offload, a model or optimizer state left on the CPU.",
         "Check the DeepSpeed config's offload_optimizer: for partial offload (\"ratio\" below 1) use \"device\": "
         "\"cpu\" with \"pin_memory\": true (no nvme_path); with offload let DeepSpeed build its CPU optimizer (an "
         "\"optimizer\" section in the config, or deepspeed.ops.adam.DeepSpeedCPUAdam; Megatron-DeepSpeed's "
         "--cpu-optimizer) instead of passing a FusedAdam. Without DeepSpeed, move the model to the GPU before "
         "creating the fused optimizer. A restart fails the same way.", retry=False),
    # ZeRO-1/2 with a parameter that has no elements: mixed_precision_linkage.py's _init_lp_to_hp_mapping hands an empty
    # one lying inside a partition to tensor_fragment.py's get_hp_fragment_mapping, whose assertion reads "fragment
    # start {fragment_start} should be < fragment_end {fragment_end}" (the two equal: an empty fragment; fixed by
    # deepspeedai/DeepSpeed#8298), and stage_1_and_2.py's gradient reduction (average_tensor) looks up partition ids it
    # never gave such a parameter, `partition_ids = self.param_to_partition_ids[i][param_id]` failing with Python's
    # KeyError (a trailing zero-sized parameter, deepspeedai/DeepSpeed#8280; a model whose parameters
    # deepspeed.zero.Init already emptied, handed to a stage 1/2 optimizer). The KeyError on that line, as a
    # traceback prints it (code line, carets, error) or as a post quotes it (the error, then the line).
    _sig("zero-empty-param", r"fragment start (\d+) should be < fragment_end \1\b|"
         r"self\.param_to_partition_ids\[\w+\]\[\w+\]\n" + r"(?:[ \t]*[~^][~^ \t]*\n)?(?:\[rank\d+\]: ?)?KeyError: \d+|"
         r"KeyError: \d+\n(?:[^\n]*\n){0,6}?[^\n]*self\.param_to_partition_ids\[\w+\]\[\w+\]",
         "ZeRO stage 1/2 met a trainable parameter with no elements (a zero-sized layer such as nn.Linear(n, 0) or an "
         "empty nn.Parameter, or parameters that deepspeed.zero.Init had already partitioned to empty placeholders, "
         "which only ZeRO-3 gathers): this DeepSpeed release maps each parameter to a piece of its partition and "
         "gives such a parameter an empty piece or none, so the mapping or the gradient reduction fails.",
         "Install a DeepSpeed release that skips zero-sized parameters (pip install -U deepspeed; "
         "deepspeedai/DeepSpeed#8280 and #8298), or freeze or remove the empty parameters (requires_grad=False); "
         "build the model under deepspeed.zero.Init only with ZeRO stage 3. A restart fails the same way.",
         retry=False),
    # ZeRO-1/2's optimizer (stage_1_and_2.py) creates its gradient buckets' ipg_buffer and ipg_index in its own
    # backward(), which the engine's backward calls before loss.backward(); its gradient hooks read them. A training loop
    # calling loss.backward() itself (or a wrapper's tensor.backward, as Lightning Fabric's precision plugin did) runs
    # the hooks without them: `'DeepSpeedZeroOptimizer' object has no attribute 'ipg_index'` (FP16_DeepSpeedZeroOptimizer
    # before 0.6). Quotes and backticks as a post may wrap the name.
    _sig("ds-loss-backward", r"'(?:FP16_)?DeepSpeedZeroOptimizer' object has no attribute [`'\"]*ipg_index\b|"
         + sigwords.DS_DIRECT_BACKWARD,  # round 159: DeepSpeed 0.18+'s own refusal
         "The training loop ran the backward pass itself (loss.backward(), or a wrapper calling tensor.backward) "
         "instead of through the DeepSpeed engine: under ZeRO stage 1/2 the optimizer's gradient hooks need the "
         "buckets that the engine's backward (engine.backward(loss)) sets up first, so they fail; newer DeepSpeed "
         "refuses such a call itself where it cannot follow it (ZeRO stage 0, a loss that needed scaling).",
         "Call model_engine.backward(loss) and model_engine.step() (the engine deepspeed.initialize returned) instead "
         "of loss.backward() and optimizer.step(); with accelerate, accelerator.backward(loss); with Lightning "
         "Fabric, fabric.backward(loss) from a release that hands it to the engine. A restart fails the same way.",
         retry=False),
    # Python's ModuleNotFoundError for one of DeepSpeed's compiled ops, named as op_builder's absolute_name() names it
    # (deepspeed/ops/op_builder/*.py: 'deepspeed.ops.adam.{NAME}_op' for cpu_adam and fused_adam,
    # 'deepspeed.ops.transformer.{NAME}_op', 'deepspeed.ops.aio.{NAME}_op', ...): OpBuilder.load() imports that module
    # when the install says the op was pre-built (and DeepSpeed 0.3.0 imported it directly, before ops were built just
    # in time); the module is only there when the install compiled it (DS_BUILD_CPU_ADAM=1, DS_BUILD_OPS=1; 0.3 stopped
    # building cpu_adam by default, deepspeedai/DeepSpeed#450). Not the package itself missing ('deepspeed'), nor a
    # pure-Python module of it ('deepspeed.ops.op_builder'), nor a built module that fails to load (an ImportError
    # naming its .so: undefined-symbol, shared-lib-missing).
    _sig("ds-op-not-built", r"No module named '?deepspeed\.ops\.(?:\w+\.)*\w+_op'?(?![\w.])",
         "DeepSpeed looked for one of its compiled ops (CPU Adam for ZeRO-Offload, fused Adam, the transformer "
         "kernels, async I/O) as a module built at install time, and this installation has no such module: the op was "
         "not compiled when DeepSpeed was installed (pip and install.sh build none of them unless asked), or the "
         "installation that had it was replaced or copied without its compiled files.",
         "Build the op into the installation: reinstall with its DS_BUILD_ flag (DS_BUILD_CPU_ADAM=1 pip install "
         "deepspeed --no-cache-dir, or DS_BUILD_OPS=1 for all; DeepSpeed 0.3's ./install.sh took the same flags) and "
         "check `ds_report` shows it installed, or use a DeepSpeed release that compiles ops just in time on first use "
         "(needs ninja and the CUDA toolkit); the same on every node. A restart fails the same way.", retry=False),
    # Python's TypeError for an order comparison or arithmetic between a str and a number, raised on a line of
    # DeepSpeed's runtime (the innermost frame under deepspeed/runtime/: engine.py's `if self.gradient_clipping() >
    # 0.0`, config.py's _batch_assertion `assert train_batch > 0`, lr_schedules.py's WarmupLR `max(2,
    # warmup_num_steps)`): a config value DeepSpeed reads as a number is a string, the "auto" that the HF Trainer's and
    # Accelerate's DeepSpeed configs use as a placeholder they fill in themselves, or a number quoted in JSON/YAML. Not a
    # str in torch's or a script's own frame, nor DeepSpeed's launcher reading its command line.
    # (The path after deepspeed/runtime/ is bounded, 120 characters: unbounded, each of many such paths on one line
    # scanned to the line's end.)
    _sig("ds-config-auto", r"[/\\]deepspeed[/\\]runtime[/\\][^\"\n]{0,120}\.py\", line \d+, in [\w<>]+\n" + _CODE_LINE +
         r"(?:\[rank\d+\]: ?)?TypeError: ?(?:'[<>]=?' not supported between instances of '(?:str' and '(?:int|float)|"
         r"(?:int|float)' and 'str)'|unsupported operand type\(s\) for [^:\n]{1,3}: '(?:str' and '(?:int|float)|"
         r"(?:int|float)' and 'str)')",
         "DeepSpeed compared or computed with a value of its config that is a string: the config keeps \"auto\" "
         "placeholders (the HF Trainer's and Accelerate's example configs), which only those two replace with numbers "
         "when they create the engine, and here DeepSpeed was given them as they are (deepspeed.initialize called by the "
         "script itself or by another library, or an Accelerate/Trainer path that does not fill that key); or a number "
         "was written as a quoted string.",
         "Put numbers in place of \"auto\" (gradient_clipping, lr and the scheduler's warmup_num_steps, train_batch_size "
         "and train_micro_batch_size_per_gpu...) when DeepSpeed gets the config directly, or let the HF Trainer or "
         "accelerate create the engine from it; write numbers unquoted. A restart fails the same way.", retry=False),
    # runtime/engine.py _configure_zero_optimizer (every release since ZeRO-1: `assert not isinstance(optimizer,
    # DummyOptim), "zero stage {} requires an optimizer".format(zero_stage)`): a ZeRO-1/2 engine built with no optimizer
    # (none in the config, none passed: the HF Trainer's and Accelerate's DummyOptim placeholder), most often a second,
    # frozen model (a DPO/PPO reference model) prepared with the training config. Not where the error's own block shows
    # that model (TRL's `_prepare_deepspeed(self.ref_model)`): there the fix is the library's version (corpus case
    # trl-825-zero2-ref-model-optimizer). The whole block is read for it; the evidence is the message (group ev).
    _sig("ds-zero-requires-optimizer", r"\A(?:(?!ref_model)[\s\S])*?(?P<ev>zero stage \d requires an optimizer)"
         r"(?:(?!ref_model)[\s\S])*\Z",
         "DeepSpeed was asked to build a ZeRO stage 1/2 engine for a model without an optimizer: the DeepSpeed config "
         "has no \"optimizer\" section and none was passed (the Hugging Face Trainer and Accelerate then hand DeepSpeed "
         "a placeholder), but ZeRO-1/2 partition an optimizer's states. Most often the model is a second, frozen one "
         "(a DPO/PPO reference model) that the trainer prepares with the training run's ZeRO-1/2 config.",
         "Add an \"optimizer\" section to the DeepSpeed config (e.g. \"optimizer\": {\"type\": \"AdamW\", \"params\": "
         "{\"lr\": \"auto\", \"weight_decay\": \"auto\"}} with the Trainer), which DeepSpeed then builds for every "
         "engine; or use a trainer version that prepares the reference model without ZeRO-1/2 (for inference); or "
         "pass the optimizer to deepspeed.initialize. A restart fails the same way.", retry=False),
)

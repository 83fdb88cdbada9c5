"""Failure signatures of the training stack's own checks (round 14 of issue 45): an experiment tracker without its
login, a gated model on the Hugging Face Hub, FlashAttention on a GPU older than its kernels, torch's libuv store
on a build without libuv, ZeRO-3's parameters left in flight, fp16 AMP asked to unscale fp16 weights; and round 15's:
a quantized model placed where Accelerate cannot train it, FSDP given mixed dtypes, CUDA in a forked child, ranks
running different collectives; and round 16's: DeepSpeed's pdsh runner failing on its own --ssh_port, Horovod built
without MPI; and round 18's: ssh itself failing under a launcher's Python (exit status 255 of an ssh command), Ray's
memory monitor killing workers for host memory, NCCL's own check of mismatched collectives; and round 19's: torch.compile
refusing its environment, Triton/Inductor without a C compiler, the Trainer given a quantized model without adapters,
FSDP flattening frozen and trainable parameters together, TRL's DPO given a ref_model and a peft_config, Accelerate's
DeepSpeed config file beside its own DeepSpeed fields and its DeepSpeed without a dataloader, a Half kernel torch does
not have. Each pattern is the wording of the library that prints it (wandb, huggingface_hub/transformers,
flash-attn, torch's TCPStore, DeepSpeed's ZeRO-3 coordinator, torch.cuda.amp's GradScaler, accelerate's prepare(),
torch FSDP's flat parameter, torch.cuda's lazy init, torch.distributed's debug wrapper, DeepSpeed's
multinode_runner.py, Horovod's launcher and its init, Python's subprocess, Ray's raylet and its OutOfMemoryError,
NCCL's own WARN, torch's Dynamo and Inductor, Triton's build, the Trainer's quantization check, TRL's trainers,
Accelerate's DeepSpeed plugin, ATen's dtype dispatch), so any script that meets the same cause is explained the same
memory monitor killing workers for host memory, NCCL's own check of mismatched collectives; and round 20's: a
notebook launcher meeting CUDA already initialized in the kernel, a spawned process unable to unpickle what a
notebook's __main__ defined; and round 93's: that refusal in torch's words, with the notebook launcher named
before it. Each pattern is the wording of the library that prints it (wandb, huggingface_hub/transformers,
flash-attn, torch's TCPStore, DeepSpeed's ZeRO-3 coordinator, torch.cuda.amp's GradScaler, accelerate's prepare(),
torch FSDP's flat parameter, torch.cuda's lazy init, torch.distributed's debug wrapper, DeepSpeed's
multinode_runner.py, Horovod's launcher and its init, Python's subprocess, Ray's raylet and its OutOfMemoryError,
NCCL's own WARN, accelerate's notebook_launcher and Lightning's fork check, Python's pickle), so any script that meets the same cause is explained the same
way. sigmessages.py places this table in its own, before the devices' facts."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import SPAWN_UNPICKLABLE

# The notebook launcher's refusal (notebook-cuda-initialized, two entries below): what happened, and its fix.
NOTEBOOK_CUDA_CAUSE = (
    "The notebook's kernel had already initialized CUDA (a cell called torch.cuda, put a model or tensor on the GPU, or "
    "imported a library that does) before a launcher that forks one process per GPU from it (accelerate's "
    "notebook_launcher, Lightning's ddp_notebook): forked children cannot use CUDA their parent initialized, so the "
    "launcher refused to start them, or they failed at their first CUDA call.")
NOTEBOOK_CUDA_FIX = (
    "Restart the kernel and run only imports and definitions that leave CUDA alone before the launch "
    "(torch.cuda.is_initialized() must still be False right before it); create the model, the Accelerator and every "
    "CUDA call inside the function the launcher runs, and import a library that initializes CUDA inside it too, or "
    "upgrade one whose own import initializes CUDA (releases of accelerate and diffusers did). A restart of the launch "
    "alone fails the same way.")
# From the launcher's last mention before the error (each stretch of text read from one mention only: linear time).
_LAUNCHER = r"\bnotebook_launcher\b"
_REST = r"(?:(?!" + _LAUNCHER + r")[^\n])*?"
_NOT_A_WORKER = r"(?![^\n]*(?:DataLoader worker|_worker_loop|[/\\](?:pool|worker)\.py\b|" + _LAUNCHER + r"))[^\n]*\n"
NOTEBOOK_LAUNCHER_FORK = _sig(
    "notebook-cuda-initialized",
    _LAUNCHER + _REST + r"(?:\n(?:" + _NOT_A_WORKER + r"){0,40}?" + _REST + r")?"
    r"(?P<ev>Cannot re-initiali[sz]e CUDA in forked subprocess)",
    NOTEBOOK_CUDA_CAUSE, NOTEBOOK_CUDA_FIX, retry=False)

TRAINING_SIGNATURES: tuple[Signature, ...] = (
    # wandb's own words: its UsageError without a key and no terminal, its API refusing the key, its key check.
    _sig("wandb-login", r"api_key not configured \(no-tty\)|W&B API: user is not logged in|"
         r"API key must be 40 characters long",
         "Weights & Biases logging is on (the HF Trainer reports to wandb whenever wandb is installed and report_to "
         "is not set, or the script calls wandb.init) but this process has no valid API key and no terminal to log "
         "in from, so wandb refused to start and the rank exited.",
         "Log in on every node (wandb login, or WANDB_API_KEY in the environment every rank gets: .deepspeed_env "
         "for remote ranks), or turn it off: WANDB_MODE=disabled (or offline), or --report_to none.", retry=False),
    # huggingface_hub's GatedRepoError and transformers' message for it (401/403 on a gated model or dataset).
    _sig("hub-gated", r"You are trying to access a gated repo|Cannot access gated repo for url|GatedRepoError|"
         r"Repo (?:model|dataset) [\w./-]+ is gated|Access to (?:model|dataset) [\w./-]+ is restricted",
         "The model (or dataset) on the Hugging Face Hub is gated: the request carried no token, or the token's "
         "account has not been granted access (the conditions on the model's page not accepted), so the Hub "
         "refused it (401/403).",
         "Accept the conditions on the model's Hub page with the account whose token the nodes use, give every rank "
         "that token (huggingface-cli login on each node, or HF_TOKEN in the environment every rank gets), or "
         "download it once with the token onto storage every node sees and load it by that path.", retry=False),
    # flash-attn 2's architecture checks (its C++ extension's TORCH_CHECK texts).
    _sig("flash-attn-arch", r"FlashAttention only supports (?:Ampere|Turing) GPUs or newer|"
         r"FlashAttention backward for head dim [^\n]{0,40}?requires A100",
         "FlashAttention 2's kernels run only on Ampere or newer GPUs (compute capability 8.0+: A100, RTX 30xx/40xx, "
         "H100); this GPU is older (V100, T4, RTX 20xx), or the backward pass for its head dimension needs an "
         "A100/H100.",
         "Turn flash attention off on these GPUs (transformers: attn_implementation=\"sdpa\" or \"eager\"; the "
         "trainer's flash_attn/use_flash_attn option off; the script's flash-attn patch removed), or run on "
         "Ampere-or-newer GPUs; a restart fails the same way.", retry=False),
    # flash-attn 1.x's backward (csrc/flash_attn/fmha_api.cpp, mha_bwd: `if (head_size > 64) TORCH_CHECK(is_sm80)`,
    # later `is_sm80 || is_sm90`) and torch 2.0's own SDPA flash kernel check the GPU with a bare TORCH_CHECK, which
    # c10 words `Expected <condition> to be true, but got false.`: only that condition, never another TORCH_CHECK's.
    _sig("flash-attn-arch", r"Expected is_sm80(?: \|\| is_sm90)? to be true, but got false",
         "Flash attention's backward pass for a head dimension over 64 (flash-attn 1.x's kernels, and torch 2.0's "
         "own scaled_dot_product_attention flash kernel) runs only on sm80/sm90 GPUs (A100, H100); this GPU (an RTX "
         "30xx/40xx, A10, L4, V100, T4...) failed that check, so training stops at its first backward.",
         "Train without those flash kernels on these GPUs (the script's non-flash variant, e.g. FastChat/LLaVA "
         "train.py instead of train_mem.py, or its xformers one; for torch's SDPA, "
         "torch.backends.cuda.sdp_kernel(enable_flash=False) or a torch release with the fixed dispatch), use "
         "flash-attn 2, whose backward runs on any Ampere-or-newer GPU up to head dim 192, or run on A100/H100; a "
         "restart fails the same way.", retry=False),
    # flash-attn 2.0 renamed flash_attn_unpadded_*func to flash_attn_varlen_*func (its README, "Upgrading from
    # FlashAttention (1.x)"). Code that imports one of them in a try/except leaves the name undefined when the
    # installed flash-attn is the other major version (or absent), and Python's NameError names it at the call.
    _sig("import-name", r"NameError: name 'flash_attn_(?:varlen|unpadded)_(?:qkv|kv)?(?:packed_)?func' is not defined",
         "The code calls a flash-attn function by its name in one major version (flash_attn_varlen_*func in "
         "flash-attn 2.x, flash_attn_unpadded_*func in 1.x: 2.0 renamed them); the installed flash-attn is the other "
         "version, or none is installed, so the code's guarded import found nothing and the name was never defined.",
         "Install the flash-attn major version the code is written for (varlen names: flash-attn 2, pip install "
         "flash-attn --no-build-isolation; unpadded names: flash-attn 1.0.x), built for this torch and CUDA, the "
         "same on every node; a restart fails the same way.", retry=False),
    # torch's TCPStore: libuv asked for (the default since torch 2.4) on a build without it (Windows wheels).
    _sig("libuv-unsupported", r"use_libuv was requested but PyTorch was buil[dt] without libuv support",
         "torch's rendezvous store (TCPStore) asked for its libuv backend, the default since torch 2.4, but this "
         "torch build has none: the Windows builds of torch are built without libuv.",
         "Set USE_LIBUV=0 in every rank's environment (or add use_libuv=0 to the init_method URL); torch supports "
         "distributed training on Windows poorly, so prefer Linux or WSL2.", retry=False),
    # DeepSpeed ZeRO-3's parameter coordinator (partitioned_param_coordinator.reset_step).
    _sig("ds-inflight-params", r"still have inflight params",
         "DeepSpeed ZeRO-3 found parameters still gathered (in flight) at the end of a forward pass: a known ZeRO-3 "
         "bug of some DeepSpeed releases (generation or evaluation between training steps, as in RLHF), or a model "
         "whose forward uses different submodules from one step to the next.",
         "Install another DeepSpeed release (upgrade first: its issue tracker names the fixed ones); with the same "
         "release avoid what triggers it (ZeRO-2 instead of ZeRO-3, the same submodules on every forward). A restart "
         "meets it again.", retry=False),
    # torch.cuda.amp / torch.amp GradScaler._unscale_grads_.
    _sig("amp-fp16-params", r"Attempting to unscale FP16 gradients",
         "fp16 mixed precision (torch's GradScaler: the Trainer's --fp16 without DeepSpeed, Accelerate's "
         "mixed_precision fp16) was given trainable parameters that are themselves float16 (the model, or layers made "
         "trainable such as embeddings or lm_head, loaded with torch_dtype=float16); AMP keeps trained weights in "
         "float32.",
         "Load the model in float32, or cast every parameter with requires_grad to float32 after adding adapters, or "
         "train in bf16 on GPUs that support it, or let DeepSpeed's fp16 (its own loss scaler) train it.",
         retry=False),
    # accelerate's Accelerator.prepare()/_prepare_one: a bitsandbytes 8-/4-bit model (or any device_map='auto' one)
    # whose hf_device_map is not this process's own device, or spans several devices, in a distributed run.
    _sig("quantized-model-placement",
         r"You can't train a model that has been loaded (?:in (?:8|4)-bit(?: or 4-bit)?[\w -]{0,20}?precision|"
         r"with `?device_map='auto'`?)(?: (?:on a different device than the one you're training on|on multiple "
         r"devices|in any distributed mode))?",
         "Accelerate refused to train a model placed by its device_map where this process cannot train it: a "
         "bitsandbytes 8-bit/4-bit model (QLoRA) loaded on another GPU than the process's own, or spread over several "
         "GPUs (device_map='auto') while several processes train (torchrun, accelerate launch, deepspeed).",
         "Load the quantized model on each process's own GPU: device_map={'': torch.cuda.current_device()} (or "
         "{'': int(os.environ['LOCAL_RANK'])}); to spread one model over several GPUs, run a single process instead. "
         "Older accelerate releases refused any multi-device 8-bit model: upgrade accelerate. A restart fails the same "
         "way.", retry=False),
    # torch.distributed.fsdp's FlatParamHandle._validate_tensors_to_flatten (older releases: FlatParameter's own check).
    _sig("fsdp-mixed-dtype", r"Must flatten tensors with uniform dtype but got|"
         r"`?FlatParameter`? requires uniform dtype but got",
         "FSDP was given a module whose parameters are in different dtypes (float32 and bfloat16/float16: adapters, "
         "norms or quantization state left in another precision): FSDP flattens each wrapped unit into one tensor of "
         "a single dtype and refuses mixed ones.",
         "Give FSDP parameters of one dtype: load the model with one torch_dtype and cast the trainable adapters to it, "
         "for QLoRA set bnb_4bit_quant_storage to that dtype, or wrap with use_orig_params=True (torch >= 2.1) or FSDP's "
         "MixedPrecision instead of casting by hand. A restart fails the same way.", retry=False),
    # torch.distributed.fsdp's FlatParamHandle._validate_tensors_to_flatten (_flat_param.py): `raise ValueError("Cannot
    # flatten integer dtype tensors")`; torch 1.12-1.13's flat_param.py (_init_flat_param): "Integer parameters are
    # unsupported". bitsandbytes' quantized weights (Params4bit stored as uint8 unless quant_storage is set, Int8Params)
    # are such parameters (round 49).
    _sig("fsdp-integer-params", r"Cannot flatten integer dtype tensors|ValueError: Integer parameters are unsupported",
         "FSDP was given integer parameters, which its flat parameters cannot hold: almost always a "
         "bitsandbytes-quantized model wrapped by FSDP for QLoRA or 8-bit LoRA, whose 4-bit weights are stored as "
         "uint8 by default (and 8-bit weights as int8).",
         "For QLoRA under FSDP load the model with BitsAndBytesConfig(..., bnb_4bit_quant_storage=torch.bfloat16), the "
         "same dtype as torch_dtype and the rest of the model (bitsandbytes >= 0.43, transformers >= 4.39, accelerate "
         ">= 0.28, peft >= 0.10), as PEFT's and bitsandbytes' FSDP-QLoRA guides do; an 8-bit model cannot be sharded "
         "by FSDP: use 4-bit QLoRA, DDP or DeepSpeed for it. A restart fails the same way.", retry=False),
    # torch.distributed.fsdp's FlatParamHandle._validate_tensors_to_flatten (_flat_param.py): "Must flatten tensors with uniform
    # `requires_grad` when `use_orig_params=False`"; older torch's flat_param.py (the corpus case): "`FlatParameter` requires
    # uniform `requires_grad`". A wrapped unit holding frozen and trainable parameters, as LoRA leaves them.
    _sig("fsdp-frozen-params", r"Must flatten tensors with uniform `?requires_grad`?|"
         r"`?FlatParameter`? requires uniform `?requires_grad`?",
         "FSDP (with use_orig_params=False) flattens each wrapped unit's parameters into one tensor, which must be all "
         "trainable or all frozen; a unit held both: LoRA/PEFT adapters beside their frozen base weights, or layers "
         "partly frozen by hand.",
         "Wrap with use_orig_params=True (Accelerate: fsdp_use_orig_params: true, the Trainer's "
         "fsdp_config use_orig_params), or wrap so that frozen and trainable parameters are in separate FSDP units "
         "(PEFT's fsdp_auto_wrap_policy), or freeze nothing in the unit. A restart fails the same way.", retry=False),
    # A launcher that forks GPU workers from a notebook's kernel, refusing because the kernel already initialized CUDA:
    # accelerate's notebook_launcher (launchers.py: its torch.cuda.is_initialized() check, its check of libraries known
    # to initialize CUDA on import (bitsandbytes, since November 2023), and in later releases its RuntimeError for the
    # children's "Cannot re-initialize CUDA in forked subprocess"), Lightning's ddp_notebook / ddp_fork
    # (lightning_fabric's _check_bad_cuda_fork). Before cuda-fork: both words stand in accelerate's traceback.
    _sig("notebook-cuda-initialized", r"To launch a multi-GPU training from your notebook, you need to avoid running "
         r"any instruction using `?torch\.cuda`? in any cell|CUDA has been initialized before the `?notebook_launcher`? "
         r"could create a forked subprocess|Lightning can't create new processes if CUDA is already initialized|"
         r"Libraries known to initiali[sz]e (?:CUDA|device) upon import have been imported already",
         NOTEBOOK_CUDA_CAUSE, NOTEBOOK_CUDA_FIX, retry=False),
    # The same refusal in torch's words, where accelerate does not translate it (before its 0.19, and since it starts
    # the processes with torch's elastic agent, which prints each child's traceback and raises ChildFailedError): the
    # forked children's "Cannot re-initialize CUDA in forked subprocess" with accelerate's notebook_launcher named in
    # the 40 lines before it (its frames, the cell's call). Read with the lines before the error (sigmessages.
    # READS_BEFORE); not where a DataLoader worker or a Pool stands between them (cuda-fork: a fork inside the training
    # function). Not after it: the elastic agent's child traceback first, the launcher's frames then (left to cuda-fork).
    NOTEBOOK_LAUNCHER_FORK,
    # Python's pickle (pickle.py _getattribute and _pickle.c: "Can't get attribute %R on %R") loading, in a process
    # started by spawn, an object that was defined in an interactive __main__: a notebook cell, the REPL or python -c.
    # The child's __main__ is then the bare built-in module, the repr `<module '__main__' (built-in)>`, which lacks it.
    _sig("notebook-spawn-main", r"Can't get attribute '[^'\n]{1,200}' on <module '__main__' \(built-in\)>",
         "A process started with the spawn method (DDP or ddp_spawn from a notebook, torch.multiprocessing.spawn, a "
         "multiprocessing Pool or DataLoader workers under spawn) had to unpickle a class or function defined in an "
         "interactive __main__ (a notebook cell, the REPL, python -c): the new process has no such __main__ to "
         "import it from.",
         "Move the class and functions the workers need into a .py module and import them in the notebook, or run "
         "the training as a script (torchrun, accelerate launch); in a notebook use a fork-based launcher "
         "(Lightning's ddp_notebook, accelerate's notebook_launcher) with CUDA untouched before it. A restart fails "
         "the same way.", retry=False),
    # Round 87: Python's pickle refusing an object that a process started with spawn is given (Lightning's ddp_spawn,
    # the default for several GPUs before Lightning 2.0; torch.multiprocessing.spawn): _pickle.c/pickle.py save_global's
    # "Can't pickle local object 'f.<locals>.C'" (AttributeError), "Can't pickle <obj>: it's not the same object as /
    # it's not found as M.N" and "...: attribute lookup N on M failed" (PicklingError), typeobject.c's "cannot pickle
    # 'T' object" ("can't pickle T objects" before 3.8), _ctypes.c's "ctypes objects containing pointers cannot be
    # pickled". Only where the log shows the spawn start (its word, mp.spawn, popen_spawn, ForkingPickler) or several
    # GPUs on the error's line or the few lines before it: copy.deepcopy raises the same TypeError, and torch.save and
    # torch.distributed's *_object collectives pickle too (their frames, SPAWN_NOT_HERE, keep it off).
    _sig("spawn-unpicklable", SPAWN_UNPICKLABLE,
         "Processes started with the spawn method get what they run by pickle: Lightning's ddp_spawn strategy (the "
         "default for several GPUs before Lightning 2.0; also chosen in the script) sends the LightningModule and "
         "everything it holds (hyperparameters, callbacks, a logger's or config object, the LR scheduler) to each "
         "new process, as torch.multiprocessing.spawn sends its arguments, and one of those objects cannot be "
         "pickled: a class or function defined inside a function (<locals>), a lambda, a class generated at run "
         "time, a lock, a ctypes pointer, a dict view, or a method a library replaced with a wrapper.",
         "Start the processes without pickling the model: strategy='ddp' in Lightning (from a script, the default "
         "in Lightning 2.x) instead of ddp_spawn; or make what crosses picklable: define classes and functions at "
         "module level, create unpicklable objects (a tracker's config, a connection, a scheduler with a local "
         "function) inside each process (the setup hook), and upgrade a library whose own wrapper is the object "
         "(Lightning before 1.3 with precision=64). The message names the object. A restart fails the same way.",
         retry=False),
    # Round 43: CPython's multiprocessing/spawn.py, _check_not_importing_main: a process started by spawn (or
    # forkserver) re-imports the parent's main module, and that import itself starts processes: "An attempt has been
    # made to start a new process before the / current process has finished its bootstrapping phase." Its second line
    # alone, which no other program prints; any prefix a launcher puts before each line ([rank0]: ) does not matter.
    _sig("spawn-main-guard", r"current process has finished its bootstrapping phase",
         "A child process started with the spawn method (vLLM's or a launcher's workers, torch.multiprocessing.spawn, "
         "a DataLoader or Pool under spawn, Windows and macOS defaults) re-imported the main script, and the script's "
         "top level started processes again (it builds the engine, the model or the pool at module level, or an "
         "import does): Python refused to start a process while the child was still importing the script.",
         "Put the script's work in a function called under if __name__ == '__main__': (imports and definitions only "
         "at module level, nothing that starts processes or an engine), or move the imports that start processes "
         "inside that function. A restart fails the same way.", retry=False),
    # torch.cuda._lazy_init in a child made by fork after the parent initialized CUDA.
    _sig("cuda-fork", r"Cannot re-initiali[sz]e CUDA in forked subprocess",
         # Review 157: a notebook launcher's fork too (accelerate#3524: torchao's import initialized CUDA)
         "CUDA was initialized in a process that then forked (a DataLoader worker, a multiprocessing Pool, a "
         "preprocessing map with num_proc, a notebook's launcher forking the ranks after a cell or an import "
         "initialized CUDA), and the child used CUDA: a forked child cannot initialize CUDA again.",
         "Keep CUDA out of forked children (tensors on the CPU in Dataset/collate code, move them to the GPU in the "
         "training loop), or start children with the spawn method: torch.multiprocessing.set_start_method('spawn'), "
         "DataLoader(multiprocessing_context='spawn'). In a notebook, restart the kernel and keep CUDA calls and "
         "imports that touch CUDA inside the launched function. A restart fails the same way.", retry=False),
    # torch.distributed's ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL, or a library that turns it on);
    # NCCL's own check of the collectives the ranks enqueue says it in a WARN line (ncclDevAssertedMismatch).
    _sig("collective-mismatch", r"Detected mismatch between collectives on ranks|Mismatched collective detected",
         "The ranks called different collectives (another operation, shape or dtype, or one rank skipped a call): "
         "code that runs a collective on some ranks only, or with rank-dependent arguments (metrics logged with "
         "different keys per rank, a branch on rank or on the data, uneven batches). Without the debug check the "
         "ranks would hang.",
         "Find the call the message names on the ranks it names and make every rank run the same collectives in the "
         "same order with the same shapes (the same metric keys on every rank, no collective inside a rank-only "
         "branch, padded or equal batches). A restart meets it again.", retry=False),
    # DeepSpeed's PDSHRunner.get_cmd, releases 0.11.0-0.14.0: `environment["PDSH_SSH_ARGS_APPEND"] += f" -p {port}"`
    # with --ssh_port, where the variable need not exist (0.14.1 reads it with .get(), deepspeedai/DeepSpeed#5318).
    _sig("ds-ssh-port-keyerror", r"KeyError: ['\"]PDSH_SSH_ARGS_APPEND['\"]",
         "DeepSpeed's pdsh launcher (releases 0.11.0 to 0.14.0) adds --ssh_port to PDSH_SSH_ARGS_APPEND without "
         "checking that the variable exists: given --ssh_port, and no PDSH_SSH_ARGS_APPEND in the launching shell's "
         "environment, the launcher itself raised KeyError before any node was started (a DeepSpeed bug, fixed in "
         "0.14.1).",
         "Upgrade DeepSpeed on the launching node (0.14.1 or later), or do not pass --ssh_port: give ssh the port "
         "instead (a Port line for those hosts in ~/.ssh/config), or set PDSH_SSH_ARGS_APPEND (empty will do) in the "
         "launching shell. A restart fails the same way.", retry=False),
    # Horovod's launcher (horovodrun --mpi / jsrun, run_controller) and its init or ProcessSet given an MPI
    # communicator, on a build without MPI; the launcher's Gloo twin ("Gloo support has not been built") is another build option.
    _sig("horovod-without-mpi", r"\bMPI support has not been built|Horovod has not been built with MPI support",
         "Horovod was built without MPI support (installed without HOROVOD_WITH_MPI=1, or its build found no MPI "
         "compiler and left MPI out), and the run asked for MPI: horovodrun --mpi or jsrun, a launch by an MPI "
         "launcher, or an "
         "mpi4py communicator given to hvd.init or a process set.",
         "Reinstall Horovod with MPI on every node: HOROVOD_WITH_MPI=1 pip install --no-cache-dir --force-reinstall "
         "horovod, with MPI installed and its mpicxx on the PATH (horovodrun --check-build shows what a build has); or "
         "run it with the Gloo controller (horovodrun --gloo). A restart fails the same way.", retry=False),
    # Python's subprocess.CalledProcessError for an ssh command that ended with 255, ssh's own exit status for a failure
    # of ssh itself (never the remote command's): DeepSpeed's runner checks `ssh -o PasswordAuthentication=no HOST
    # hostname` and asks `ssh HOST hostname -I` for the master address, as a string, a one-string list or shlex's list.
    _sig("ssh-unreachable", r"Command '\[?'?(?:\S*/)?ssh'?[ ,](?:(?!Command ')[^\n])*?' returned non-zero exit status 255\b",
         "A launcher's ssh command to a node failed in ssh itself (exit status 255 is ssh's own error, not the remote "
         "command's): the node is down or unreachable, its sshd is not running or listens on another port, its name "
         "does not resolve, or it refused this user's key (passwordless ssh is not set up: DeepSpeed's check runs "
         "ssh with PasswordAuthentication=no).",
         "Run the same ssh command by hand on the launching node to see ssh's own message; set up passwordless ssh to "
         "every host in the hostfile (ssh-copy-id, or `dscluster doctor`), give the port sshd listens on (--ssh_port), "
         "or put the node's IP in the hostfile. On one node, drop the hostfile. A restart fails the same way.",
         retry=False),
    # Ray's memory monitor (raylet's node_manager.cc summary, and the OutOfMemoryError a task or actor raises): the
    # node's host memory passed RAY_memory_usage_threshold and Ray killed a worker before the kernel would.
    # Round 39: the advice raylet prints after such a kill, alone when the summary was cut ("address the out of memory
    # issue: .../ray-oom-prevention.html ... To adjust the kill threshold, set the environment variable
    # `RAY_memory_usage_threshold`"; Ray 2.0-2.2: the eviction threshold, `RAY_memory_usage_threshold_fraction`).
    _sig("memcg-oom", r"Workers? \(tasks / actors\) killed due to memory pressure \(OOM\)|"
         r"Task was killed due to the node running low on memory|address the out of memory issue: \S*ray-oom-prevention|"
         r"To adjust the (?:kill|eviction) threshold, set the environment variable `?RAY_memory_usage_threshold",
         "Ray's memory monitor killed a worker: the node's host memory (RAM, not GPU memory) passed Ray's threshold "
         "(RAY_memory_usage_threshold, 0.95 of the node's memory by default).",
         "Use less host memory on that node (less CPU offload, smaller rollout or data batches, fewer workers or actors "
         "per node) or give it more memory; raising the threshold or turning the monitor off "
         "(RAY_memory_monitor_refresh_ms=0) only leaves the kill to the kernel. A restart hits the same limit.",
         retry=False),
    # torch's DataLoader (torch/csrc/DataLoader.cpp): `DataLoader worker (pid N) is killed by signal: Killed.` A worker
    # SIGKILLed while its rank lived: the kernel's OOM killer picks the process that holds the most memory, a worker
    # with its copy of the dataset; an operator or a scheduler ends the rank, not one of its workers.
    _sig("memcg-oom", r"DataLoader worker \(pid \d+\) is killed by signal: Killed",
         "A DataLoader worker of the rank was killed (SIGKILL) while the rank itself lived: the kernel's out-of-memory "
         "killer, when host memory (RAM, or the container's or batch job's limit) ran out; each worker holds its own "
         "copy of what the dataset keeps in Python objects.",
         "Use less host memory (fewer DataLoader workers per rank, a dataset that reads from disk or memory-maps "
         "instead of holding lists of Python objects) or give the job more (the batch job's --mem, the container's "
         "--memory); dmesg on the node names the kill. A restart hits the same limit.", retry=False),
    # torch.compile refusing its environment before compiling anything: torch/__init__.py's compile() and Dynamo's
    # check_if_dynamo_supported ("Dynamo is not supported on Python 3.12+", "Python 3.13+ not yet supported for
    # torch.compile", torch 2.0's "Windows not yet supported for torch.compile"), and Inductor's scheduler
    # (create_backend) for a GPU Triton cannot compile for ("Found <GPU> which is too old to be supported by the triton
    # GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0").
    _sig("compile-unsupported", r"Dynamo is not supported on Python 3\.\d+|"
         r"(?:Python 3\.\d+\+?|Windows) not yet supported for torch\.compile|"
         r"which is too old to be supported by the triton GPU compiler",
         "torch.compile cannot run here and says so before compiling anything: this torch's Dynamo does not support "
         "this Python (3.12 before torch 2.4, 3.13 before 2.6), torch.compile did not support Windows (torch 2.0-2.x), "
         "or the GPU is older than Triton, Inductor's GPU backend, supports (compute capability below 7.0: P100, GTX "
         "10xx, TITAN X).",
         "Turn torch.compile off for this environment (the script's compile option, the Trainer's --torch_compile "
         "false, Accelerate's dynamo_backend no, or TORCHDYNAMO_DISABLE=1), or give it one it supports: a torch release "
         "that supports this Python (or Python 3.11), Linux or WSL2, a Volta-or-newer GPU. A restart fails the same way.",
         retry=False),
    # Triton builds a small C launcher per kernel with the host's C compiler (triton/runtime/build.py, get_cc: $CC, then
    # gcc, clang; "Failed to find C compiler. Please specify via CC environment variable."), and Inductor's CPU code
    # needs a C++ one (torch._inductor.exc.InvalidCxxCompiler: "No working C++ compiler found in
    # torch._inductor.config.cpp.cxx").
    _sig("c-compiler-missing", r"Failed to find C compiler\. Please specify via CC environment variable|"
         r"No working C\+\+ compiler found in torch\._inductor",
         "A Triton or Inductor kernel had to be compiled and the node has no C/C++ compiler: Triton builds a small C "
         "launcher for every kernel with the host's compiler ($CC, else gcc or clang), Inductor's CPU code needs g++; "
         "slim container images and fresh machines often have none. torch.compile, Liger/Unsloth kernels and other "
         "Triton kernels all need it.",
         "Install a compiler on every node (apt-get install build-essential, dnf install gcc gcc-c++; in the container "
         "image), or point CC (and CXX) at one that exists; on Windows use a Triton build that brings its own. A restart "
         "fails the same way.", retry=False),
    # transformers' Trainer (and TRL's trainers through it): "You cannot perform fine-tuning on purely quantized models.
    # Please attach trainable adapters on top of the quantized model to correctly perform fine-tuning."
    _sig("quantized-no-adapters", r"You cannot perform fine-tuning on purely quantized models",
         "The Trainer was given a quantized model (bitsandbytes 4-bit/8-bit, GPTQ, AWQ) with no trainable adapters on "
         "it: quantized weights cannot be trained, so it refuses. The adapters were never attached (get_peft_model / "
         "the trainer's peft_config not given), or attached to another object than the one passed to the Trainer (a "
         "merged or unwrapped model).",
         "Attach adapters before training: model = get_peft_model(prepare_model_for_kbit_training(model), "
         "LoraConfig(...)) (Unsloth: FastLanguageModel.get_peft_model), or pass peft_config to TRL's trainer; and pass "
         "that PEFT model to the Trainer. To train all weights, load the model without quantization. A restart fails "
         "the same way.", retry=False),
    # TRL's DPOTrainer and its siblings (KTO, BCO, CPO...): "You passed both a ref_model and a peft_config. For training
    # PEFT adapters with DPO there is no need to pass a reference model." (since huggingface/trl#1289)
    _sig("trl-ref-model-peft", r"You passed both a ref_model and a peft_config",
         "TRL's preference trainer (DPO, KTO...) was given both a reference model and a peft_config: with adapters the "
         "base model with the adapters turned off is the reference, so TRL (since early 2024) refuses a second one.",
         "Pass ref_model=None when training adapters (peft_config given); to compare against another model, pass it "
         "with force_use_ref_model=True (in the trainer's config in recent TRL). A restart fails the same way.",
         retry=False),
    # Accelerate's DeepSpeedPlugin._deepspeed_config_checks: "When using `deepspeed_config_file`, the following
    # accelerate config variables will be ignored: [...]" (the config's own DeepSpeed fields, ACCELERATE_CONFIG_DS_FIELDS).
    _sig("accelerate-ds-config-file", r"When using `?deepspeed_config_file`?, the following accelerate config variables "
         r"will be ignored",
         "The Accelerate config names a DeepSpeed config file and also sets DeepSpeed fields of its own (zero_stage, "
         "offload devices, gradient_accumulation_steps, gradient_clipping, mixed_precision...): with "
         "deepspeed_config_file those belong in the DeepSpeed file, and Accelerate refuses both. Often an old default "
         "config (~/.cache/huggingface/accelerate/default_config.yaml) or launch options add them.",
         "Remove the listed fields from the Accelerate config (or run `accelerate config` again and give it the "
         "DeepSpeed file) and set them in the DeepSpeed config file instead; do not pass them on the accelerate launch "
         "line either. A restart fails the same way.", retry=False),
    # Accelerate's Accelerator._prepare_deepspeed: "When using DeepSpeed(,) `accelerate.prepare()` requires you to pass at
    # least one of training or evaluation dataloaders (with `batch_size` attribute returning an integer value) or
    # alternatively set an integer value in `train_micro_batch_size_per_gpu` in the deepspeed config file"; review 73:
    # its sibling for a dataloader whose batch_size is None (a batch_sampler's): "At least one of the dataloaders passed
    # to `accelerate.prepare()` has `None` as batch size" (0.2x to today).
    _sig("accelerate-ds-batch-size", r"When using DeepSpeed,? `?accelerate\.prepare\(\)`? requires you to pass at least "
         r"one of training or evaluation dataloaders|dataloaders passed to `?accelerate\.prepare\(\)`? has `?None`? as "
         r"batch size",
         "Accelerate ran with DeepSpeed but could not tell DeepSpeed the batch size: accelerate.prepare() was given no "
         "dataloader (or one without an integer batch_size) and the DeepSpeed config has no integer "
         "train_micro_batch_size_per_gpu. Often DeepSpeed is on only because the Accelerate config turned it on for a "
         "script not written for it.",
         "Pass the training dataloader to the same accelerator.prepare() call as the model, or set an integer "
         "train_micro_batch_size_per_gpu in the DeepSpeed config; if DeepSpeed was not meant, run `accelerate config` "
         "again without it (or accelerate launch without --use_deepspeed). A restart fails the same way.", retry=False),
    # ATen's dtype dispatch (Dispatch.h: "\"NAME\" not implemented for 'Half'"): the kernel has no float16 version on the
    # device it ran on, torch's CPU kernels above all ("LayerNormKernelImpl", "addmm_impl_cpu_", "slow_conv2d_cpu").
    _sig("half-on-cpu", r"\"[\w:]+\" not implemented for 'Half'",
         "A torch operation has no float16 (Half) kernel on the device it ran on: most often float16 tensors on the "
         "CPU (torch's CPU kernels for LayerNorm, matrix products and convolution lacked Half before torch 2.1-2.3), "
         "from a model loaded in float16 that stayed on the CPU (no GPU visible, or never moved to it), else an "
         "operation or extension that has no Half version at all.",
         "Run the model on the GPU (check torch.cuda.is_available() and move the model and inputs to it), or compute in "
         "float32 (or bfloat16) on the CPU: no .half() or torch_dtype=torch.float16 there. A restart fails the same "
         "way.", retry=False),
)

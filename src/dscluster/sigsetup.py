"""Failure signatures of a setup written for another release (rounds 19 and 20 of issue 45): ms-swift's parser given
another release's arguments, a CUDA extension's setup.py without nvcc, a library's class given a keyword its installed
release does not take, an Open MPI older than 2.0 handing `-H HOST:N` to ssh as a host name. Each pattern is the wording
of the program that prints it (ms-swift's _parse_args, flash-attn's and apex's setup.py, Python's TypeError with the
class's qualified name, OpenSSH's ssh.c). sigmessages.py places this table with the other messages' ones, before
signatures.py's own table: each is more specific than the family there that its words also fit (argparse-usage,
ssh-unreachable). Round 55 added a console script whose #! line names a python that no longer exists (an environment
moved or mounted at another path), in bash's and zsh's words. Round 95 added a launch script of bash run by sh (dash's
own words) and the launcher module run by a python without PyTorch (CPython's runpy's words for `-m`). Round 116 added
the word python given to a launcher where the script belongs (CPython's pymain_run_file words for a file named python)
and torchrun's --nproc_per_node that is no number (torch/distributed/run.py determine_local_world_size)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import ADDRESS_IN_USE, LAUNCHER_VARS

# torch/multiprocessing/spawn.py ProcessContext.join's header of a child's traceback (ProcessRaisedException), the
# same words since torch 1.0 (Exception before 1.11).
_SPAWN_CHILD = r"-- Process \d+ terminated with the following error:"


def _a_backends_variable(m) -> bool:
    """env-var-unset's aside_if: the KeyError's variable is one that a registered backend's own signature reads (its
    scheduler's, set only inside its jobs): that signature names the cause."""
    from dscluster.launcher import backends  # noqa: PLC0415 - the registry's modules import these tables

    line = m.group(0).rsplit("\n", 1)[-1]
    return any(s.pattern.search(line) for s in backends.signatures())


SETUP_SIGNATURES: tuple[Signature, ...] = (
    # ms-swift's parser (swift/llm/base.py _parse_args, and 2.x's sft/infer mains): HfArgumentParser's leftover arguments
    # raise ValueError(f'remaining_argv: {remaining_argv}'); with --ignore_args_error true only a warning says them.
    _sig("argparse-usage", r"ValueError: remaining_argv: \[",
         "ms-swift's command line (swift sft/rlhf/infer/export, megatron sft) has arguments its parser does not know, "
         "listed as remaining_argv: a typo, or an argument of another ms-swift release (3.x renamed 2.x's: --sft_type "
         "became --train_type, --model_id_or_path became --model; later releases add new ones).",
         "Check them against this release's `swift sft --help` (pip show ms-swift) and use its names, or install the "
         "release the command was written for; a restart would fail the same way.", retry=False),
    # transformers' HfArgumentParser.parse_args_into_dataclasses (hf_argparser.py): what no dataclass field took, raise
    # ValueError(f"Some specified arguments are not used by the HfArgumentParser: {remaining_args}"), a list.
    _sig("argparse-usage", r"Some specified arguments are not used by the HfArgumentParser: \[",
         "The command line has arguments that the script's argument dataclasses (transformers' TrainingArguments and "
         "the script's own, read by HfArgumentParser) do not define: a misspelt or invented flag, a value split from "
         "its flag, or a flag of another transformers or script version; the message lists them.",
         "Check the listed arguments against the script's --help (and TrainingArguments of the installed "
         "transformers) and use their names; a restart fails the same way.", retry=False),
    # OpenSSH's own words (ssh.c: "ssh: Could not resolve hostname %s: %s") for a name of the form HOST:N. Open MPI
    # reads `-H HOST:N` as N slots on HOST since the -host rework for 2.0 (open-mpi/ompi#1353, "-host foo:N"); 1.10
    # and older (CentOS 7's openmpi package) pass the whole `HOST:N` to ssh as a name. horovodrun and torchpack's
    # dist-run always write -H HOST:N (horovod/horovod#1677). Before ssh-unreachable, whose words this also fits.
    _sig("mpi-host-slots", r"ssh: Could not resolve hostname [\w.-]+:\d+:",
         "ssh was given `HOST:N` as a host name. `:N` is the slot count of Open MPI's `-H HOST:N` (horovodrun and "
         "torchpack write -H that way) or a port, never part of a name: an Open MPI older than 2.0 (1.10 in "
         "CentOS 7's packages) does not read the slot count and ssh's to `HOST:N` itself.",
         "Check the MPI launcher's version on the launching node (its --version) and use Open MPI 2.0 or newer (the one horovod was built "
         "against, first on the PATH), or give the hosts without the count: a hostfile with `HOST slots=N` lines "
         "(horovodrun --hostfile). A port goes to ssh as -p or in ~/.ssh/config, not after the name. A restart "
         "fails the same way.", retry=False),
    # A CUDA extension's own setup.py without nvcc: flash-attn's (2.1.1 in the corpus case) and apex's raise_if_cuda_home_none ("RuntimeError:
    # flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc available?"); later
    # flash-attn releases only warn with the same words (a prebuilt wheel may still come), so the RuntimeError alone.
    _sig("cuda-home-missing", r"RuntimeError: \S+ was requested, but nvcc was not found",
         "A CUDA extension (flash-attn, apex...) was being built from source and its setup.py found no CUDA compiler "
         "(nvcc): no CUDA toolkit on the node, or CUDA_HOME/PATH not pointing at it. pip builds from source when no "
         "prebuilt wheel fits this torch, CUDA and Python.",
         "Install a prebuilt wheel that matches torch, CUDA and Python (the project's release page), or install the CUDA "
         "toolkit of torch's CUDA version (a -devel container image), set CUDA_HOME and put its bin on the PATH, then "
         "build again (flash-attn: pip install flash-attn --no-build-isolation). A restart fails the same way.",
         retry=False),
    # Python's TypeError for a keyword a library's class does not take, named by its qualified name (Python 3.10+):
    # TRL's trainers and configs, transformers' TrainingArguments and BitsAndBytesConfig, Accelerate's Accelerator,
    # PEFT's LoraConfig, vLLM's EngineArgs and SamplingParams rename, move and drop constructor arguments between
    # releases (trl 0.13 moved SFTTrainer's max_seq_length into SFTConfig). A class of the script's own never matches.
    _sig("import-name", r"(?<![\w.])(?:(?:SFT|DPO|GRPO|PPO|KTO|ORPO|CPO|BCO|RLOO|Reward|OnlineDPO|GKD|PRM)(?:Trainer|Config)|"
         r"(?:Seq2Seq)?TrainingArguments|BitsAndBytesConfig|Accelerator|LoraConfig|(?:Async)?EngineArgs|SamplingParams)"
         r"\.__init__\(\) got an unexpected keyword argument '\w+'",
         "A library's class was given a keyword argument that the installed version does not take: the code was "
         "written for another version of TRL, transformers, Accelerate, PEFT or vLLM (they rename, move and drop "
         "constructor arguments between releases: trl 0.13 moved SFTTrainer's max_seq_length into SFTConfig), or the "
         "name is misspelt.",
         "Install the version the code was written for (its requirements, or the version its README names), the same on "
         "every node, or change the call to this version's names (the class's documentation for the installed version, "
         "pip show PACKAGE). A restart fails the same way.", retry=False),
    # Python's AttributeError on accelerate's Accelerator, for a property accelerate added in a later release that
    # transformers' Trainer or TRL reads (accelerator.py: `parallelism_config` from 1.10, huggingface/accelerate#3682
    # and #3703; `is_fsdp2` from 1.6, #3394). transformers 4.56.0's Trainer read parallelism_config unguarded
    # (huggingface/transformers#40668 guarded it in 4.56.1). Round 49.
    _sig("import-name", r"'Accelerator' object has no attribute '(?:parallelism_config|is_fsdp2)'",
         "transformers (or TRL) reads a property of accelerate's Accelerator that the installed accelerate does not "
         "have yet (parallelism_config came with accelerate 1.10, is_fsdp2 with 1.6): transformers or TRL is newer "
         "than the accelerate installed beside it.",
         "Upgrade accelerate to the version transformers and TRL require (pip install -U accelerate; 1.10 or newer "
         "for parallelism_config), the same on every node, or install the transformers patch release that guards it "
         "(4.56.1 for 4.56.0's Trainer). A restart fails the same way.", retry=False),
    # Python's AttributeError on accelerate's FSDP plugin (utils/dataclasses.py's FullyShardedDataParallelPlugin), for a
    # member accelerate added in a later release than the one installed, read by transformers' Trainer
    # (create_accelerator_and_postprocess: fsdp_plugin.activation_checkpointing, huggingface/transformers#25988) or TRL:
    # from the plugin's git history, limit_all_gathers 0.16, use_orig_params 0.18, forward_prefetch,
    # optim_state_dict_config, param_init_fn and sync_module_states 0.21, set_state_dict_type 0.22,
    # activation_checkpointing 0.23, cpu_ram_efficient_loading and transformer_cls_names_to_wrap 0.34, fsdp_version,
    # reshard_after_forward, set_cpu_offload, validate_cpu_offload and validate_mixed_precision_policy 1.6. Not
    # min_num_params (dropped in 0.11, back in 0.34: either way), not torch's FullyShardedDataParallel (the wrapped
    # model), nor AcceleratorState without fsdp_plugin (no FSDP config given). Round 84.
    _sig("import-name", r"'FullyShardedDataParallelPlugin' object has no attribute '(?:limit_all_gathers|"
         r"use_orig_params|forward_prefetch|optim_state_dict_config|param_init_fn|sync_module_states|"
         r"set_state_dict_type|activation_checkpointing|cpu_ram_efficient_loading|transformer_cls_names_to_wrap|"
         r"fsdp_version|reshard_after_forward|set_cpu_offload|validate_cpu_offload|validate_mixed_precision_policy)'",
         "transformers (or TRL) reads a member of accelerate's FSDP plugin (FullyShardedDataParallelPlugin) that the "
         "installed accelerate does not have yet (activation_checkpointing came with accelerate 0.23, "
         "cpu_ram_efficient_loading with 0.34, fsdp_version with 1.6): transformers or TRL is newer than the "
         "accelerate installed beside it.",
         "Upgrade accelerate to the version transformers and TRL require (pip install -U accelerate, or the version "
         "their setup names), the same on every node. A restart fails the same way.", retry=False),
    # The other way round: a member accelerate took out of the plugin, called by an older transformers or PEFT
    # (save_model, load_model, save_optimizer and load_optimizer left it in 0.21 for utils/fsdp_utils.py's
    # save_fsdp_model and the like: transformers 4.2x's Trainer.save_model called fsdp_plugin.save_model, azshue/
    # AutoPoison#5; get_module_class_from_name left it in 0.30, which PEFT's fsdp_auto_wrap_policy called on the
    # class, huggingface/peft#1699). CPython says `type object 'X' has no attribute` for the class itself.
    _sig("import-name", r"(?:'FullyShardedDataParallelPlugin' object|type object 'FullyShardedDataParallelPlugin') "
         r"has no attribute '(?:save_model|load_model|save_optimizer|load_optimizer|get_module_class_from_name)'",
         "transformers (or PEFT) calls a method of accelerate's FSDP plugin (FullyShardedDataParallelPlugin) that the "
         "installed accelerate no longer has (save_model, load_model, save_optimizer and load_optimizer left it in "
         "accelerate 0.21, get_module_class_from_name in 0.30): transformers or PEFT is older than the accelerate "
         "installed beside it.",
         "Upgrade transformers and PEFT to releases made for this accelerate (pip install -U transformers peft), or "
         "install the older accelerate they were released with, the same on every node. A restart fails the same "
         "way.", retry=False),
    # The shell's words when the kernel cannot run a script's #! interpreter: bash (execute_cmd.c: "%s: %s: bad
    # interpreter" plus strerror) `bash: SCRIPT: INTERPRETER: bad interpreter: No such file or directory`, zsh (exec.c:
    # "%s: bad interpreter: %s: %e") `zsh: SCRIPT: bad interpreter: INTERPRETER: no such file or directory`. pip writes
    # the absolute path of the environment's python into its console scripts (deepspeed, torchrun, accelerate), so an
    # environment moved, copied or mounted at another path keeps scripts naming the old one. Not an interpreter ending in
    # a carriage return (^M, \r: the script was saved with CRLF line ends), nor `Permission denied` (not executable, a
    # noexec mount).
    _sig("script-bad-interpreter", r"(?<!\^M)(?<!\r): bad interpreter: No such file or directory|"
         r": bad interpreter: /[^\s:]*(?<!\^M)(?<!\r): no such file or directory",
         "A script's first line (#!) names an interpreter that does not exist on this machine: most often a console "
         "script (deepspeed, torchrun, accelerate) that pip wrote with the absolute path of the python of the environment "
         "it was installed in, and the environment has since been moved, copied or mounted at another path (or that "
         "python was removed).",
         "Reinstall the package from the environment's python at the path it is used from (python -m pip install "
         "--force-reinstall --no-deps deepspeed), or run the tool through that python (python -m deepspeed.launcher.runner "
         "..., python -m torch.distributed.run ...); keep environments at the same path on every node. A restart fails "
         "the same way.", retry=False),
    # Python's own words when a package's own entry script cannot import the package it sits in: the script
    # (LLaMA-Factory's src/llamafactory/launcher.py that llamafactory-cli hands to torchrun, a repository's example at
    # the root of its clone) runs as __main__ in a directory named like the package, `from PKG... import` or `import
    # PKG`, and importlib answers `ModuleNotFoundError: No module named 'PKG'` (Python/import.c, importlib._bootstrap
    # _find_and_load_unlocked). The package's own CLI found it, so the ranks run another python: a torchrun first on
    # PATH from the base conda or ~/.local/bin (hiyouga/LlamaFactory#4200, #4035), or a python the package was never
    # installed in. Only a traceback of one frame, the script's own (a package's module such as
    # torch/utils/tensorboard/__init__.py doing `import tensorboard` is a deeper frame: module-not-found's), only the
    # package the script's own directory names, and only that top-level name (not `No module named 'PKG.sub'`).
    _sig("torchrun-other-python",
         r"(?:\[rank\d+\]:[ \t]*)?Traceback \(most recent call last\):[ \t]*\n(?:\[rank\d+\]:)?[ \t]*"
         r'File "[^"\n]*[/\\](?P<own>[A-Za-z_]\w*)[/\\][^"\n/\\]+\.py", line \d+, in <module>\n'
         r"(?:\[rank\d+\]:)?[ \t]+(?:from|import)[ \t]+(?P=own)(?![\w])[^\n]*\n"
         r"(?:(?:\[rank\d+\]:)?[ \t]*[\^~]+[ \t]*\n)?"
         r"(?:\[rank\d+\]:[ \t]*)?(?:ModuleNotFoundError: )?No module named '?(?P=own)'?(?![\w.])",
         "A rank's python cannot import the package whose own entry script it is running: the ranks run another "
         "Python than the environment the package is installed in. Most often the torchrun (or deepspeed) found first on "
         "PATH belongs to another environment (the base conda, a pip --user install in ~/.local/bin) and starts its "
         "own python; otherwise the package was never installed (pip install -e .) in the python that runs the ranks.",
         "Launch with the environment's own launcher: check `which torchrun` and the failure's `of binary:` python, put "
         "the environment's bin first on PATH (export PATH=$CONDA_PREFIX/bin:$PATH) or run `python -m "
         "torch.distributed.run` with that environment's python, remove the stray torchrun (pip uninstall --user "
         "torch), or pip install -e . in the python the ranks use; the same on every node. A restart fails the same "
         "way.", retry=False),
    # dash's words (src/expand.c evalvar/varvalue: sh_error("Bad substitution"), printed by error.c as "NAME: LINE: ",
    # older releases "NAME: LINE: NAME: ") for a ${...} form it does not have: bash's ${@:3} (OpenMMLab's
    # tools/dist_train.sh passes its extra arguments so), ${var:0:5}, ${var//a/b}, ${!name}. `sh script.sh` runs
    # dash on Debian and Ubuntu. Not bash's own `line N: ${...}: bad substitution` (lower case, a mistake in a bash
    # script) nor zsh's `bad substitution`. Review 108: nor where NAME is the shell itself (sh, dash, /bin/sh): dash
    # names its arg0 for a command string given with -c (`sh: 1: ...` from os.system or subprocess's shell=True, make's
    # recipes and Ansible's shell tasks `/bin/sh: 1: Bad substitution`), whose fix is that tool's shell, not bash for a
    # script.
    _sig("bash-script-under-sh", r"(?<![^\s>])(?!(?:/usr)?(?:/bin/)?(?:da)?sh: )\S+: \d+: (?:\S+: )?(?-i:B)ad "
         r"substitution[ \t]*$",
         "A bash script was run by sh: `sh script.sh` on Debian and Ubuntu starts dash, which stops with \"Bad "
         "substitution\" at the first ${...} form only bash has (${@:3}, ${var:0:5}, ${var//a/b}, ${!name}), before "
         "anything is launched. OpenMMLab's tools/dist_train.sh, like most repositories' train scripts, is a bash "
         "script.",
         "Run the script with bash (bash tools/dist_train.sh CONFIG GPUS, as the documentation writes it), or make it "
         "executable and run it as ./script.sh so that its #!/usr/bin/env bash line chooses the shell. A restart fails "
         "the same way.", retry=False),
    # CPython's runpy for `python -m torch.distributed.launch` (or .run) in a python without torch: Python 2 (runpy's
    # _run_module_as_main prints "%s: %s" % (sys.executable, exc); pkgutil imports the parent package first, so the
    # name is torch.distributed), Python 3.6+ (_get_module_details: "Error while finding module specification for
    # {!r} ({}: {})"), 3.4-3.5 ("Error while finding spec for", the type as <class '...'>). Not torch present without
    # the module (`No module named torch.distributed.run`: a torch older than 1.9), nor a broken torch (`No module
    # named 'torch._C'`), nor another package run with -m (module-not-found's).
    _sig("launcher-python-without-torch", r"(?<!\S)\S*python[\d.]*: (?:No module named torch\.distributed[ \t]*$|"
         r"Error while finding (?:module specification|spec) for 'torch\.[\w.]+' \((?:<class ')?"
         r"(?:ModuleNotFoundError|ImportError)(?:'>)?: No module named 'torch'\))",
         "The python that ran the launcher module (`python -m torch.distributed.launch` or `-m torch.distributed.run`, "
         "as tools/dist_train.sh and similar scripts start it) has no PyTorch at all: it is not the environment the "
         "training was installed in. Most often sudo (it resets PATH to the system's, so `python` is /usr/bin/python, "
         "Python 2 on older systems), a shell where the conda or virtual environment is not activated, or `python` "
         "being another interpreter than the `python3` that has torch.",
         "Run the script from the activated environment without sudo (or `sudo env PATH=$PATH ...`), or point the "
         "script's interpreter at the environment's own (its PYTHON variable, or the full path such as "
         "$CONDA_PREFIX/bin/python); `which python` and `python -c 'import torch'` in the same shell show which one "
         "runs. A restart fails the same way.", retry=False),
    # CPython's own words when the script it was told to run does not exist (Modules/main.c pymain_run_file:
    # "%ls: can't open file %R: [Errno %d] %s", the path as given up to 3.8, made absolute from 3.9), here for a file
    # named python: every launcher runs each rank as `<python> [-u] <script> <args>` (accelerate's launch, torch's
    # run.py, DeepSpeed's launch.py; a platform such as UCloud's UAI-Train adds /usr/bin/python itself), so a command
    # written `accelerate launch python train.py` has it run a script named python (hiyouga/LlamaFactory#1212, #2748).
    # Before script-not-found (signatures.py), whose words these are too and whose fix (the script on shared storage)
    # is not this one's. Only the file's own name python, python3, python3.N or python.exe, not a script whose name
    # merely holds the word (train_python.py, python_train.py).
    _sig("launcher-given-python-as-script",
         r"can't open file '(?:[^'\n]*[/\\])?python(?:3(?:\.\d+)?)?(?:\.exe)?': \[Errno 2\]",
         "The launch command has the word python where the training script belongs (`accelerate launch python "
         "train.py`, `torchrun --nproc_per_node N python train.py`, `deepspeed python train.py`, or a platform that "
         "adds the interpreter itself): the launcher already starts each rank as `python <script> <args>`, so the "
         "script it was given was a file named python, which does not exist, and every rank exited before training.",
         "Remove python from the launch command and give the launcher the script itself (accelerate launch train.py "
         "..., torchrun --nproc_per_node N train.py ..., deepspeed train.py ...; on a platform that adds the "
         "interpreter, only the script and its arguments); to run a module use the launcher's -m/--module. A restart "
         "fails the same way.", retry=False),
    # torch's launcher (torch/distributed/run.py determine_local_world_size, torchrun and python -m
    # torch.distributed.launch since torch 1.9): --nproc_per_node is int()'d, else one of cpu, gpu, xpu, a private
    # backend's name or auto; anything else raises ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}")
    # before any rank starts. Most often an empty value: a launch script's GPU-count argument or variable not given
    # (zcablii/LSKNet#112: `./tools/dist_train.sh ${CONFIG_FILE} ${GPU_NUM}` typed as documented), or a GPU list
    # (0,1) where a count belongs.
    _sig("nproc-per-node-invalid", r"Unsupported nproc_per_node value: (?!\{)",  # not the raise's own source line
         "torchrun (torch.distributed.run / launch) was given a --nproc_per_node that is no number of processes (nor "
         "auto, cpu or gpu), so it started nothing: most often an empty value, from a launch script's GPU-count "
         "argument or variable that was not given (its documentation's placeholders such as $GPU_NUM typed "
         "literally, an unset environment variable), or a list of GPU ids where a count belongs.",
         "Pass the number of processes per node, normally the node's GPU count (torchrun --nproc_per_node 4 ..., or "
         "the script's own argument: bash tools/dist_train.sh configs/x.py 4), with CUDA_VISIBLE_DEVICES choosing "
         "which GPUs; check the variable the script reads is set (echo $GPU_NUM). A restart fails the same way.",
         retry=False),
    # Round 168: torchrun's own variables (torch/distributed/elastic/agent/server/api.py _set_worker_env / local_elastic
    # _agent.py: LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, TORCHELASTIC_*)
    # read with os.environ[NAME] (the os frame, as env-var-unset reads it) in a process torchrun did not start: DeepSpeed's
    # launcher (deepspeed/launcher/launch.py) sets LOCAL_SIZE, not LOCAL_WORLD_SIZE (dscluster launch adds that one alias).
    _sig("torchrun-var-unset", r"(?:\bos\.py|<frozen os>)\"?, line \d+, in __getitem__\s*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"\bKeyError: b?['\"](?:LOCAL_WORLD_SIZE|GROUP_RANK|GROUP_WORLD_SIZE|ROLE_RANK|ROLE_WORLD_SIZE|ROLE_NAME|"
         r"TORCHELASTIC_[A-Z_]+)['\"]",
         "The script reads a variable that only torchrun (torch.distributed.run, its elastic agent) sets for each rank "
         "(LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, TORCHELASTIC_*, named by the KeyError), and this process was not "
         "started by torchrun: DeepSpeed's launcher sets LOCAL_RANK, RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and "
         "LOCAL_SIZE (the processes on this node) instead (dscluster launch adds LOCAL_WORLD_SIZE, no other); a plain "
         "python process sets none.",
         "Read what every launcher sets, with a fallback: os.environ.get(\"LOCAL_WORLD_SIZE\") or os.environ.get("
         "\"LOCAL_SIZE\") for the processes on this node, LOCAL_RANK and WORLD_SIZE for the rest; or start the script "
         "with torchrun --nproc_per_node N. A restart fails the same way.", retry=False),
    # Round 168: CPython's import of a relative name in a module without a package (Python/import.c
    # resolve_name: "attempted relative import with no known parent package", 3.6+; 3.5's SystemError "Parent module
    # '' not loaded, cannot perform relative import"; Python 2's "Attempted relative import in non-package"): a
    # script with `from .x import y` run as a file, as every launcher runs its script unless told -m/--module. Not
    # "attempted relative import beyond top-level package" (a package run from the wrong directory, another cause).
    _sig("relative-import-no-package", r"attempted relative import with no known parent package|"
         r"Parent module '' not loaded, cannot perform relative import|Attempted relative import in non-package",
         "The script imports with a relative import (from .module import ...) and was run as a file (python "
         "script.py, the way a launcher starts its script), so it has no parent package; it works only as a module "
         "of its package (python -m package.script).",
         "Launch it as a module from the directory above the package: dscluster launch -m package.script (deepspeed "
         "--module, torchrun -m), or make its imports absolute (from package.module import ...) with that directory "
         "on PYTHONPATH. A restart fails the same way.", retry=False),
    # Round 168: a script that starts its own processes (torch.multiprocessing.spawn, whose ProcessRaisedException
    # shows the child's traceback under _SPAWN_CHILD) whose child could not host the rendezvous store: the port is
    # taken (torch's c10d words, sigwords.ADDRESS_IN_USE). Under a launcher that already started one process per rank,
    # every launched rank spawns its own rank 0 on the same MASTER_PORT; run alone, another job holds the port.
    _sig("spawn-under-launcher", _SPAWN_CHILD + r"(?:(?!" + _SPAWN_CHILD + r")[\s\S]){0,8000}?(?P<ev>" + ADDRESS_IN_USE +
         r")",
         "A process the script started itself (torch.multiprocessing.spawn) could not host the rendezvous store: its "
         "port was taken. Most often the script spawns its own ranks while a launcher (dscluster launch, torchrun, "
         "deepspeed) already started one process per rank: each launched process spawns another full set, so two "
         "rank 0s claim MASTER_PORT and the world is counted twice; run alone, another job held that port.",
         "Under a launcher, do not spawn: call the worker once per launched process with its rank from the "
         "environment (init_process_group() without rank and world_size, LOCAL_RANK for the device), or keep "
         "mp.spawn and start the script with plain python (one process) and a free MASTER_PORT. A restart fails the "
         "same way.", retry=False),
    # Round 168: the local-rank argument refused by a parser other than argparse (signatures.py's local-rank-arg):
    # click's NoSuchOption (click/exceptions.py: "No such option: {name}" 8.0, "No such option {name!r}." 8.1+,
    # lowercase before 8.0, optparse's "no such option: --x" the same), python-fire's "Could not consume arg: --x",
    # absl's UnrecognizedFlagError "Unknown command line flag 'x'" (flags/_flagvalues.py).
    _sig("local-rank-arg", r"\bno such option:? ['\"]?--local[_-]rank\b|Could not consume arg: --local[_-]rank\b|"
         r"Unknown command line flag ['\"]local[_-]rank\b",
         "The script's command-line interface (click or typer, python-fire, absl flags, optparse) has no --local_rank "
         "option, and the launcher passes --local_rank=N (--local-rank=N from torch's launchers) to every rank.",
         "Launch with --no_local_rank (the rank is in the LOCAL_RANK environment variable), or declare the option: "
         "@click.option(\"--local_rank\", \"--local-rank\", type=int, default=-1) (typer: a local_rank parameter "
         "with typer.Option(-1, \"--local_rank\")), a local_rank=-1 parameter for fire, flags.DEFINE_integer("
         "\"local_rank\", -1, ...) for absl. A restart fails the same way.", retry=False),
    # Round 168: torch's FileStore (torch/csrc/distributed/c10d/FileStore.cpp, FileStore::wait: "Wait timeout", the
    # bare words, a RuntimeError or DistStoreError; the same in 1.x) of init_method="file://PATH": a rank waited past
    # the timeout for keys the others should have written in the same file. Not TCPStore's "wait timeout after Nms,
    # keys: ..." nor Horovod's "Wait timeout for key(s)" (sigelastic.py).
    _sig("file-store-not-shared", r"^(?:\[[^\]\n]*\] )?(?:RuntimeError|(?:torch\.distributed\.)?DistStoreError): "
         r"Wait timeout\s*$",
         "A rank waited past the timeout for the other ranks in torch's file store (init_method=\"file://PATH\"): "
         "they did not write to the same file. The path differs between ranks (made per process with tempfile, a "
         "node-local directory such as /tmp on several nodes, a name with the rank in it), the file system is not "
         "shared between the nodes, or some ranks never reached init_process_group.",
         "Give every rank one path on a file system they all see (a shared directory named by the job script before "
         "the launch, deleted before each run), or use the launcher's env:// rendezvous: init_process_group(backend) "
         "with no init_method. A restart fails the same way.", retry=False),
    # CPython's os._Environ.__getitem__ (Lib/os.py: `raise KeyError(key) from None`; 3.11+ prints its frame as
    # `File "<frozen os>", line N, in __getitem__`, earlier ones as os.py's with the raise line): os.environ[NAME] (or
    # .pop) of a variable the rank's environment lacks. The launcher's own variables (RANK, LOCAL_RANK, MASTER_ADDR...)
    # are not-launched's (sigmessages.py), a scheduler's that a backend's own signature reads (launcher/backends/: a
    # script for that scheduler run outside it) that backend's (_a_backends_variable); a dict's KeyError has no os frame.
    _sig("env-var-unset", r"(?:\bos\.py|<frozen os>)\"?, line \d+, in __getitem__\s*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"\bKeyError: b?['\"](?!" + LAUNCHER_VARS + r"['\"])"
         r"[A-Za-z_][\w.-]{0,80}['\"]",
         "The script reads an environment variable (os.environ[NAME], named by the KeyError) that the ranks' "
         "environment does not have: it is exported in the user's interactive shell (~/.bashrc, a login profile, a "
         "notebook's cell) or was set only on the submitting machine, and the launched processes did not inherit it.",
         "Set the variable for the launched ranks (dscluster launch --env NAME=VALUE, or export it in the job script "
         "before the launch; on several nodes, in every node's environment, e.g. DeepSpeed's .deepspeed_env), or have "
         "the script fall back to a default with os.environ.get(NAME, default). A restart fails the same way.",
         retry=False, aside_if=lambda m, texts: _a_backends_variable(m)),
    # Round 164: CPython's input() (Python/bltinmodule.c, builtin_input_impl: PyErr_SetNone(PyExc_EOFError) when the
    # read returns nothing, printed "EOFError: EOF when reading a line"; Python 2's raw_input() the same words). A
    # launched rank has no terminal: its standard input is empty (/dev/null, or closed by the launcher), so a prompt
    # the script (or a library it calls) shows on stdin gets end of file at once. Not pickle's "EOFError: Ran out of
    # input", multiprocessing's bare EOFError, nor a compressed file's "Compressed file ended before ...".
    _sig("stdin-eof", r"\bEOFError: EOF when reading a line\b",
         "The program asked a question on standard input (input(), a confirmation or login prompt of the script or "
         "of a library it calls) and got end of file at once: a launched rank has no terminal and its standard input "
         "is empty, so nobody can answer the prompt that worked when the script was run by hand.",
         "Take the prompt out of the launched code or answer it without a terminal: a command-line flag or an "
         "environment variable for the choice (e.g. --overwrite / --yes), for a library's prompt the argument or "
         "login it asks for (trust_remote_code=True, HF_TOKEN or WANDB_API_KEY in the ranks' environment, a login on "
         "every node beforehand). A restart fails the same way.", retry=False),
    # Round 181 (live): CPython's bdb.py raises BdbQuit (Bdb.dispatch_line/_call/_return/_exception: `if
    # self.quitting: raise BdbQuit`) once pdb was told to quit; pdb.py's do_EOF sets that on end of input, so a
    # breakpoint() or pdb.set_trace() in a launched rank, whose standard input is empty, prints "(Pdb) " and ends the
    # program with `bdb.BdbQuit` at the next line (the same in 3.8-3.13; IPython's and ipdb's debuggers print it as
    # `BdbQuit` too). Only the exception's own line: not IPython's BdbQuit_excepthook, nor pdb.Restart.
    _sig("pdb-no-terminal", r"^(?:\[rank\d+\]: )?(?:bdb\.)?BdbQuit\s*$|\braise BdbQuit\n(?:[^\n]*\n){0,2}?[^\n]*\bbdb\.BdbQuit\b",
         "The program stopped in Python's debugger (a breakpoint() or pdb.set_trace() left in the code) and the "
         "debugger quit with BdbQuit: a launched rank has no terminal, its standard input is empty, so pdb read end "
         "of file at its first prompt and quit, ending the program (or someone typed q at the prompt).",
         "Take breakpoint()/pdb.set_trace() out of the launched code, or launch with PYTHONBREAKPOINT=0 in the ranks' "
         "environment to make every breakpoint() do nothing. To debug a rank, run one process by hand in a terminal, "
         "or use a debugger that listens on a port (debugpy, remote-pdb) and attach to it. A restart fails the same "
         "way.", retry=False),
    # Round 182: DeepSpeed's accelerator/real_accelerator.py, get_accelerator(), only where DS_ACCELERATOR is set (its
    # override branch): the named accelerator's package does not import, f"{NAME}_Accelerator requires {package},
    # which is not installed on this system." (NPU, SDAA, MPS, HPU, MLU, SUPA, KLXPU; XPU's "requires PyTorch with XPU
    # support", older releases' "requires intel_extension_for_pytorch, which is not installed"), or the name is none of
    # its own: f'DS_ACCELERATOR must be one of {SUPPORTED_ACCELERATOR_LIST}. Value "{name}" is not supported'.
    _sig("ds-accelerator-unavailable", r"\b[A-Z]{2,6}_Accelerator requires [\w. ]{1,60}?(?:, which is not installed on "
         r"this system|with XPU support)|\bDS_ACCELERATOR must be one of \[",
         "DS_ACCELERATOR names an accelerator this machine's Python does not have: DeepSpeed uses the one it is told "
         "and checks its package (torch_npu for npu, torch.xpu or intel_extension_for_pytorch for xpu, "
         "habana_frameworks for hpu, torch_mlu for mlu...), which is not installed here, or the value is none of "
         "DeepSpeed's accelerator names. The setting comes from the script, the shell or a job template written for "
         "another cluster's hardware.",
         "Unset DS_ACCELERATOR (in the script, the shell, .deepspeed_env) and let DeepSpeed detect the accelerator, or "
         "set it to what this machine has (cuda for NVIDIA GPUs, cpu); install a vendor's torch extension only where "
         "its hardware is. A restart fails the same way.", retry=False),
    # Round 182: c10d's debug level, read from the environment when torch.distributed is imported (torch/distributed/
    # __init__.py calls set_debug_level_from_env; torch/csrc/distributed/c10d/debug.cpp): TORCH_DISTRIBUTED_DEBUG set
    # to anything but OFF, INFO or DETAIL stops the import with "The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO,
    # or DETAIL." (a ValueError; older torch a RuntimeError).
    _sig("dist-debug-level-invalid", r"\bThe value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO,? or DETAIL",
         "TORCH_DISTRIBUTED_DEBUG is set to a value torch does not take (1, true, debug...): it takes only OFF, INFO or "
         "DETAIL, and reads it when torch.distributed is imported, so every rank stops there, before any training.",
         "Set TORCH_DISTRIBUTED_DEBUG=DETAIL (or INFO) where it is set, the script, the shell or the job's "
         "environment, or unset it. A restart fails the same way.", retry=False),
)

"""Failure signatures of saving and resuming checkpoints (round 77 of issue 45): ranks creating the same checkpoint
directory at once, and resuming from a DeepSpeed or HF Trainer checkpoint that is not all there (model-state files
absent from the tag directory DeepSpeed loads, a checkpoint directory that differs between nodes, a directory with
nothing the loader can resume); round 101: a checkpoint's link that every node's local rank 0 creates in a shared
directory; round 163 (live): save_checkpoint called on some ranks only, torch.load of a directory, a whole checkpoint
dict given to load_state_dict, another optimizer's state, zero_to_fp32 on a checkpoint without ZeRO. Each pattern is
the wording of the component that prints it, never one log's:
CPython's os.makedirs and pathlib's Path.mkdir (Lib/os.py, Lib/pathlib.py), DeepSpeed's engine.py
(_get_all_zero_checkpoints' warning, load_checkpoint's "Client provided checkpoint load path") and
runtime/state_dict_factory.py (SDLoaderBase.check_ckpt_list: `assert len(self.ckpt_list) > 0`), the HF Trainer's
_load_from_checkpoint and its DeepSpeed integration (deepspeed_load_checkpoint). ckpt-not-shared and
ckpt-missing-optimizer-states were sigmessages.py's (round 1 and later); round 77 moved them here, in the same order,
to put ckpt-model-states-missing before them. sigmessages.py places this table where they stood: after the
DeepSpeed/Trainer configuration refusals (ds-hf-mismatch), before the unreadable checkpoint (ckpt-corrupt). The real
logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster import sigcauses
from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.sigwords import CKPT_WEIGHTS_ONLY_CAUSE, CKPT_WEIGHTS_ONLY_FIX

# A path in a FileExistsError's two-filename form, not the Hub cache's (checkpoint-saved-by-every-node, below).
_ANY_PATH = r"(?![^'\n]*(?:blobs|snapshots)/)[^'\n]*'"
_CKPT_PATH = r"(?![^'\n]*(?:blobs|snapshots)/)[^'\n]*(?:checkpoint|ckpt)[^'\n]*'"

# A whole checkpoint dict's own top-level keys beside the weights (ckpt-whole-dict-as-state-dict, below): never a
# parameter's name, which has a dot.
_CKPT_TOP = (r"(?:optimizer|optimizer_state_dict|optimizer_states|optim|lr_scheduler|lr_schedulers|scheduler|epoch|"
             r"global_step|global_steps|buffer_names|ds_version|iteration)")

# Round 178: nn.Module.load_state_dict's missing keys, then the rest of that line (never past another such line) and the
# start of the next, up to its unexpected keys (compiled-state-dict-prefix).
_MISSING = r"Missing key\(s\) in state_dict: "
_REST_OF_LINE = r"(?:(?!Missing key\(s\))[^\n])*\n[^\n]{0,60}?"

CHECKPOINT_SIGNATURES: tuple[Signature, ...] = (
    # Round 161: DeepSpeed's save_checkpoint creates save_dir on one rank only (runtime/engine.py: `if rank == 0:
    # self.checkpoint_engine.makedirs(save_dir, exist_ok=True)`, then dist.barrier(); os.makedirs in releases before
    # the checkpoint engine), so no rank of the run races it there: os.makedirs(exist_ok=True) raising FileExistsError
    # (or NotADirectoryError, a file in its parents) means that path is taken by something not a directory. Read before
    # ckpt-dir-exists-race, which offers a restart for the race.
    _sig("ds-save-dir-not-directory", r"\bin save_checkpoint\s*\n[^\n]*\bmakedirs\(save_dir, exist_ok=True\)"
         r"(?:[^\n]*\n){1,8}?[^\n]*?(?:FileExistsError: \[Errno 17\]|NotADirectoryError: \[Errno 20\])",
         "DeepSpeed's save_checkpoint could not create the checkpoint directory (save_dir): something that is not a "
         "directory stands at that path or in one of its parents, a file of that name, or a symlink whose target does "
         "not exist on this node (a scratch or network mount that is not mounted here). Only one rank creates it, so "
         "it is not a race between the ranks.",
         "Look at the path on the node (ls -l): remove or rename the file, or mount what the symlink points to (or "
         "point the link, or the script's save_dir, at a directory that exists on every node that saves). A restart "
         "fails the same way at the next save.", retry=False),
    # CPython's os.makedirs (Lib/os.py: mkdir, then `if not exist_ok or not path.isdir(name): raise`) and pathlib's
    # Path.mkdir (`if not exist_ok or not self.is_dir(): raise`) let EEXIST through with exist_ok=True only when the
    # path is not a directory when they look: another rank's mkdir of the same directory not yet visible as one on a
    # shared or distributed file system (NVIDIA-NeMo/Automodel#3686 on virtiofs), or a file or dangling link of that
    # name. Read from the caller's exist_ok=True line down to Python's FileExistsError within a few lines; without
    # exist_ok=True it is a directory that exists (a rerun), not this. A save that crossed it once passes on a rerun
    # (the race is rare: the run in #3686 had saved before), so a restart is offered.
    _sig("ckpt-dir-exists-race", then(r"\bmakedirs\(|\.mkdir\(", r"\bexist_ok\s*=\s*True\b") +
         r"[^\n]*\n(?:[^\n]*\n){0,8}?[^\n]*?FileExistsError: \[Errno 17\]",
         "Creating a directory with exist_ok=True (os.makedirs, Path.mkdir) still failed with FileExistsError: the "
         "path existed but was not a directory when Python checked. Where several ranks create the same checkpoint "
         "directory at once on a shared or distributed file system (NFS, Lustre, virtiofs, FUSE mounts), another "
         "rank's new directory is not yet seen as one; otherwise a file or a dangling symlink has that name.",
         "If a file or a broken link stands at that path, remove it. Otherwise create the directories from one rank "
         "(global rank 0, then a barrier before the others write into them), or retry the makedirs on "
         "FileExistsError (what NeMo Automodel does since #3686); resuming from the last checkpoint passes when it "
         "was the race."),
    # CPython's os.symlink/os.link (and os.rename on Windows) name both paths in their OSError ("[Errno 17] File exists:
    # 'SRC' -> 'DST'", Objects/exceptions.c's two-filename form): a checkpoint's link or file that already stands there.
    # Round 101 (NVIDIA/DeepLearningExamples#1092): a script that saves when local_rank == 0 saves once per node, and
    # the nodes race on a shared output directory for the 'last checkpoint' link. Read when a path names a checkpoint,
    # never the Hub cache's own links (snapshots/ -> blobs/: parallel hf_hub_download, huggingface/huggingface_hub#1133).
    _sig("checkpoint-saved-by-every-node", r"FileExistsError: \[Errno 17\] File exists: '(?:" + _CKPT_PATH + r" -> '"
         + _ANY_PATH + r"|" + _ANY_PATH + r" -> '" + _CKPT_PATH + r")",
         "Creating a checkpoint's link or file failed because one already stands there: more than one process saves "
         "checkpoints into the same directory (a script that saves when the local rank is 0 does so once per node, "
         "and on a shared output directory the nodes race for the same files and the 'last checkpoint' link), or an "
         "earlier run left the link behind.",
         "Save from the global rank 0 only (torch.distributed.get_rank() == 0 or RANK, not LOCAL_RANK), or give each "
         "node its own output directory; make the link atomically (create it under a temporary name, then os.replace) "
         "or remove it first, and delete a stale one an earlier run left. A restart can meet the same race.",
         retry=False),
    # DeepSpeed's engine._load_checkpoint globs the tag directory for its model-state files (_get_all_ckpt_names:
    # mp_rank_XX_model_states.pt, zero_pp_rank_N_mp_rank_XX_model_states.pt under ZeRO-3) and hands the list to
    # SDLoaderFactory.get_sd_loader, whose SDLoaderBase.__init__ calls check_ckpt_list: an empty list is the bare
    # assert. Read with its frame (state_dict_factory.py's check_ckpt_list, then the assert line), which says no more
    # than that the files are not in that directory as this process sees it: absent altogether (a copy or a save that
    # left them out, the wrong tag directory) or written on another node's disk. The assert quoted alone (a title)
    # stays ckpt-not-shared's, below.
    _sig("ckpt-model-states-missing", r"\bin check_ckpt_list\n(?:\[rank\d+\]:)?[ \t]*assert len\(self\.ckpt_list\) > 0",
         "DeepSpeed found no model-state file (mp_rank_XX_model_states.pt; zero_pp_rank_N_mp_rank_XX_model_states.pt "
         "under ZeRO-3) in the checkpoint tag directory it loads: the directory lacks them as this process sees it, "
         "either because the checkpoint does not hold them (an incomplete copy or save, weights or optimizer shards "
         "only, the wrong directory or tag, or a checkpoint saved at another ZeRO stage: stages 0-2 write "
         "mp_rank_XX_model_states.pt and stage 3 zero_pp_rank_N_mp_rank_XX_model_states.pt, so one saved under "
         "stage 2 is not found under stage 3, nor the other way) or because they were written on another node's disk "
         "(node-local checkpoint storage in a multi-node run).",
         "Look into CHECKPOINT_DIR/TAG (the tag the `latest` file names, or the one passed as tag=) on the node that "
         "failed: load from a complete DeepSpeed checkpoint that holds the model-state files next to the optimizer "
         "shards; on several nodes, keep checkpoints on storage every node mounts at the same path (or copy the "
         "first node's files to the others) before resuming. Where the ZeRO stage changed since the save, resume with "
         "the stage it was saved with (or convert it: python -m deepspeed.checkpoint.ds_to_universal, then "
         "checkpoint.load_universal true; or zero_to_fp32 and a new optimizer).", retry=False),
    _sig("ckpt-not-shared", r"The following zero checkpoints? paths are missing|"
         r"Client provided checkpoint load path: \S+ does not exist|assert len\(self\.ckpt_list\) > 0",
         *sigcauses.CKPT_NOT_SHARED,
         retry=False),
    # A checkpoint that holds weights only, asked to resume a run: the HF Trainer's words when the directory has no
    # state it can resume from (saved with save_only_model, a LoRA adapter or one module saved alone, DeepSpeed's
    # global_stepN/ states absent), in its own loader and in its DeepSpeed integration.
    _sig("ckpt-missing-optimizer-states", r"Can't find a valid checkpoint at|\[deepspeed\] failed to resume from checkpoint",
         CKPT_WEIGHTS_ONLY_CAUSE, CKPT_WEIGHTS_ONLY_FIX, retry=False),
    # Round 125: DeepSpeed MoE's per-expert-parallel-rank optimizer file (engine.py _get_optimizer_ckpt_name:
    # 'expp_rank_{expp_rank}_mp_rank_{mp:02d}_optim_states.pt'), which _load_checkpoint opens for a model with MoE
    # layers (`optim_checkpoint = torch.load(optim_load_path, ...)`, later `self.checkpoint_engine.load(optim_load_path,
    # ...)`): torch.load's _open_file_like frame right after that line means the file could not be opened. Before
    # deepspeedai/DeepSpeed#4120 it was opened even with load_optimizer_states=False (DeepSpeed#2737).
    _sig("ds-moe-optim-states-missing", r"in _load_checkpoint\n[^\n]*?(?P<ev>optim_checkpoint = [\w.]+\.load\(optim_load_path)"
         r"(?:[^\n]*\n){1,6}?[^\n]*in _open_file_like\b|No such file or directory: '[^'\n]*expp_rank_\d+_mp_rank_\d+_"
         r"optim_states\.pt",
         "DeepSpeed could not open a MoE model's expert optimizer states: for a model with MoE layers it loads the "
         "expert-parallel rank's file (expp_rank_N_mp_rank_MM_optim_states.pt) from the checkpoint's tag directory, "
         "and it is not there. DeepSpeed releases before deepspeedai/DeepSpeed#4120 (2023) open it even with "
         "load_checkpoint(..., load_optimizer_states=False); otherwise the files were not copied with the checkpoint, "
         "are not visible from this node, or were saved at another expert-parallel size.",
         "With load_optimizer_states=False, upgrade DeepSpeed (or load with load_module_only=True, which skips the "
         "optimizer and scheduler); otherwise put every expp_rank_*_optim_states.pt saved with that tag into its "
         "directory on storage every node sees, and resume with the expert-parallel size it was saved with. A "
         "restart fails the same way.", retry=False),
    # Round 125: torch.distributed.checkpoint's planner (default_planner.py: "Missing key in checkpoint state_dict:
    # {fqn}.") for a MoE experts parameter, read before sigmessages.py's ckpt-model-mismatch: the rank-local experts
    # (renumbered from 0 on each expert-parallel rank, or fused into one grouped tensor) asked under names the
    # checkpoint does not hold (mlc-ai/pith-train#89). Not an optimizer state's key (optim.state...), nor
    # load_state_dict's "Missing key(s) in state_dict".
    _sig("moe-expert-ckpt-reshard", r"Missing key in checkpoint state_dict: (?!optim)[\w.]*\.experts\.[\w.]+",
         "A MoE checkpoint does not hold the experts under the names this rank asks for: with expert parallelism each "
         "rank holds its own slice of the experts (renumbered from 0, or fused into one grouped tensor), so the "
         "expert weights must be resharded between the checkpoint's layout and the rank's. The checkpoint was saved "
         "at another expert-parallel size or in another expert layout (converted from Hugging Face's per-expert "
         "weights), or the framework's resharding of the experts did not run (a known bug of some releases).",
         "Resume with the expert-parallel size (and expert layout) the checkpoint was saved with, or convert it with "
         "the framework's converter for this one; if the framework is meant to reshard the experts on load, update "
         "it (mlc-ai/pith-train#89 fixed one such bug). A restart fails the same way.", retry=False),
    # Round 161: a checkpoint file cut short past its first bytes, as torch 2.x's zip reader meets it (serialization.py
    # _open_zipfile_reader: `torch._C.PyTorchFileReader(name_or_buffer)`, caffe2/serialize/inline_container.cc reading
    # the archive's end through miniz): the seek to a central directory the file no longer holds fails with the OS's
    # EINVAL (`OSError: [Errno 22] Invalid argument`, a path) or Python's `ValueError: negative seek value N` (a file
    # object or buffer), not PytorchStreamReader's words (sigmessages.py's ckpt-corrupt, whose texts these are). Only
    # in the reader's frame: Windows' open() of a name with a colon raises the same OSError with the name after it.
    _sig("ckpt-corrupt", r"\bPyTorchFileReader\((?:(?!PyTorchFileReader\()[^\n])*\n(?:[^\n]*\n){0,2}?[^\n]*?"
         r"(?:OSError: \[Errno 22\] Invalid argument(?!: )|ValueError: negative seek value)",
         "A checkpoint or weights file is incomplete or not in its loader's format: a save cut short (full disk, killed "
         "rank), an interrupted download, a Git LFS pointer, or a torch.save file given to safetensors (or the reverse).",
         "Resume from an earlier complete checkpoint (move the broken one aside; `dscluster ckpt verify` checks one), "
         "download the weights again (git lfs pull, then compare sizes or checksums), or read the file with its own "
         "format's loader; free disk space before the next save.", retry=False),
    # Round 159 (live): DeepSpeed's engine.load_checkpoint without a tag reads the tag from LOAD_DIR/latest; without
    # that file it logs a warning and returns (None, None) instead of raising (runtime/engine.py load_checkpoint:
    # "Unable to find latest file at {latest_path}, if trying to load latest checkpoint please ensure this file exists
    # or pass an explicit checkpoint tag when loading a checkpoint.", the same words since 0.3). The script then reads
    # the client state it got back (client_state["step"], .get(...)): Python's TypeError/AttributeError on None after
    # that warning. Not zero_to_fp32.py's "Unable to find 'latest' file at" (zero-ckpt-dir), nor the warning alone (a
    # first run that starts fresh and fails later for another reason). Read from the last warning only (linear).
    _sig("ds-ckpt-no-latest", r"Unable to find latest file at [^\n]{0,400}?explicit checkpoint tag"
         r"(?:(?!Unable to find latest file at )[\s\S]){0,20000}?"
         r"(?P<ev>TypeError: 'NoneType' object is not subscriptable|AttributeError: 'NoneType' object has no attribute "
         r"'(?:get|items|keys)'|TypeError: argument of type 'NoneType' is not iterable|TypeError: cannot unpack "
         r"non-iterable NoneType object)",
         "DeepSpeed's load_checkpoint found no `latest` file in the directory it was given and no tag was passed, so it "
         "loaded nothing and returned (None, None) with only a warning; the script then used the client state it got "
         "back (None). The directory is not a DeepSpeed checkpoint directory as save_checkpoint writes it (LOAD_DIR/"
         "latest naming LOAD_DIR/global_stepN/): another run's or a copy without `latest`, weights saved another way, "
         "or the tag directory itself.",
         "Point load_checkpoint at the directory save_checkpoint wrote (the one holding `latest`), or pass the tag "
         "(engine.load_checkpoint(DIR, tag=\"global_stepN\")); where a fresh start is meant, check the returned path for "
         "None before reading the client state. A restart fails the same way.", retry=False),
    # Round 165: nn.Module.load_state_dict (torch/nn/modules/module.py, _load_from_state_dict: "While copying the
    # parameter named {key}, whose dimensions in the model are ... an exception occurred : {ex.args}") when the model's
    # parameters are DTensors (FSDP2's fully_shard, tensor parallel) and the state_dict holds plain tensors: DTensor's
    # dispatch (torch/distributed/tensor/_dispatch.py) refuses copy_ with "aten.copy_.default got mixed torch.Tensor and
    # DTensor" (torch 2.4-2.6: "aten.copy_.default: got mixed ..."). Before ckpt-model-mismatch, which reads the
    # first line ("Error(s) in loading state_dict for") and would send the user after another configuration.
    _sig("fsdp2-load-full-state-dict", r"While copying the parameter named \"[^\"\n]{1,300}\", whose dimensions in the "
         r"model are [^\n]{0,300}?an exception occurred : \(['\"]aten\.copy_\.default:? got mixed torch\.Tensor and "
         r"DTensor",
         "The model's parameters are DTensors (sharded by FSDP2's fully_shard, or split by tensor parallelism) and "
         "model.load_state_dict() was given a full, plain state_dict (torch.load of a checkpoint saved from the "
         "unsharded model, pretrained weights): a DTensor parameter cannot copy a plain tensor into itself.",
         "Load the weights before sharding (model.load_state_dict(sd) then fully_shard / parallelize_module), or load "
         "the full state_dict into the sharded model with torch.distributed.checkpoint.state_dict.set_model_state_dict("
         "model, sd, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)) (sd on rank 0 only "
         "then); for checkpoints of sharded models use torch.distributed.checkpoint (dcp.save / dcp.load). A restart "
         "fails the same way.", retry=False),
    # Round 165: torch.distributed.checkpoint.state_dict._get_optim_state_dict (get_state_dict /
    # get_optimizer_state_dict, torch 2.2+): each optimizer state key (a parameter's index) is mapped to a name through
    # fqn_pid_mapping, built from the model's own parameters; `fqn = fqn_pid_mapping[key]` (or, where the optimizer has
    # no state yet, the param groups' `[fqn_pid_mapping[pid] for pid in ...]`) raises KeyError: <index> when
    # the optimizer's parameters are not the model's (created before fully_shard / FSDP / parallelize_module replaced
    # them, or from another copy of the model).
    _sig("optimizer-not-model-params", r"(?:\bfqn = fqn_pid_mapping\[key\]|= \[fqn_pid_mapping\[pid\] for pid in "
         r"group\[[^\]\n]{1,12}\]\])\n(?:\[rank\d+\]:)?(?:[ \t]*[~^]+[ \t]*\n(?:\[rank\d+\]:)?)?[ \t]*KeyError: \d+",
         "The optimizer's parameters are not the model's: get_state_dict / get_optimizer_state_dict names each "
         "optimizer state by the model parameter it belongs to and found one the model does not have. Most often the "
         "optimizer was created from model.parameters() before the model was wrapped or sharded (fully_shard/FSDP2, "
         "FSDP with use_orig_params=False, parallelize_module replace the parameters), so it still holds the old ones "
         "and has not been training the model at all; or it was built over another copy of the model.",
         "Create the optimizer after wrapping/sharding the model, from the wrapped model's parameters "
         "(fully_shard(model); opt = AdamW(model.parameters())), and pass get_state_dict the same model object; "
         "retrain from the last good checkpoint, as the steps so far did not update the model. A restart fails the "
         "same way.", retry=False),
    # Round 163 (live): DeepSpeed's engine.save_checkpoint is a collective that every rank must call (runtime/engine.py
    # save_checkpoint's docstring: "all processes must call this method and not just the process with rank 0 ... This
    # method will hang waiting to synchronize with other processes if it's called just for the process with rank 0"):
    # rank 0 makes save_dir, then dist.barrier(); each rank writes its own ZeRO shard. A collective's timeout raised
    # from inside DeepSpeed's own save_checkpoint frame (not the HF Trainer's _save_checkpoint) is a rank that waited
    # there for ranks that never came: gloo's (unbound_buffer.cc "Timed out waiting Nms for recv operation"), torch's
    # monitored barrier, NCCL's watchdog, within the same traceback.
    _sig("ds-save-ckpt-not-all-ranks", r"deepspeed[/\\]runtime[/\\]engine\.py\", line \d+, in save_checkpoint\n"
         r"(?:(?!Traceback \(most recent call last\))[^\n]*\n){1,60}?[^\n]*?(?:Timed out waiting \d+ms for (?:recv|send) "
         r"operation|failed to pass monitoredBarrier|Watchdog caught collective operation timeout)",
         "A rank timed out waiting inside DeepSpeed's save_checkpoint: it is a collective every rank must call (rank 0 "
         "creates the directory and all ranks meet at a barrier; under ZeRO each rank writes its own part), and the "
         "other ranks never came. It was called on some ranks only (inside `if rank == 0:` or a local-rank test, as "
         "one calls torch.save), or the other ranks were elsewhere (crashed, or busy longer than the timeout).",
         "Call engine.save_checkpoint on every rank: take it out of the rank-0 branch (DeepSpeed writes the shared "
         "files from rank 0 itself); keep only your own extra files under the rank test. If every rank does call it, "
         "read what the other ranks were doing in their logs. A restart fails the same way.", retry=False),
    # Round 163 (live): torch.load given a directory (torch/serialization.py: load -> _open_file_like -> _open_file's
    # `open(name, mode)`, the same words in torch 1.x's `super(_open_file, self).__init__(open(name, mode))`): the
    # OS's EISDIR. What people hand it is a checkpoint that is a directory: DeepSpeed's save_checkpoint tag directory,
    # the HF Trainer's checkpoint-N, a save_pretrained or torch.distributed.checkpoint directory. Only in that frame: a
    # script's own open() of a directory is not this.
    _sig("torch-load-directory", r"serialization\.py\", line \d+, in __init__\n[^\n]*?\bopen\(name, mode\)[^\n]*\n"
         r"(?:[^\n]*\n){0,2}?[^\n]*?IsADirectoryError: \[Errno 21\]",
         "torch.load (or torch.save) was given a directory where it needs a file: the checkpoint is a directory of "
         "files, such as DeepSpeed's save_checkpoint tag directory (global_stepN/ with mp_rank_00_model_states.pt "
         "and ZeRO's shards), an HF Trainer checkpoint-N/ or save_pretrained directory, or a torch.distributed."
         "checkpoint directory.",
         "Load it the way it was saved: a DeepSpeed checkpoint with engine.load_checkpoint(DIR), or its weights with "
         "deepspeed.utils.zero_to_fp32.get_fp32_state_dict_from_zero_checkpoint(DIR) (without ZeRO: torch.load of "
         "DIR/TAG/mp_rank_00_model_states.pt, then its 'module'); a Hugging Face directory with from_pretrained(DIR); "
         "a torch.distributed.checkpoint directory with torch.distributed.checkpoint.load. Otherwise name the file "
         "inside the directory. A restart fails the same way.", retry=False),
    # Round 178 (live): torch.compile's OptimizedModule (torch/_dynamo/eval_frame.py) holds the model as `_orig_mod`, so
    # a compiled model's state_dict keys start with `_orig_mod.` (`module._orig_mod.` under DDP, `model._orig_mod.`
    # inside a LightningModule). nn.Module.load_state_dict (torch/nn/modules/module.py) lists the missing keys, then the
    # unexpected ones ("\tMissing key(s) in state_dict: "a", ... \n\tUnexpected key(s) in state_dict: ..."; safetensors'
    # load_model the same words around Python lists): read only where the prefix is on one side and not the other. Both
    # sides compiled (a model of another shape) or a size mismatch are ckpt-model-mismatch's. The rest of the missing keys' line is read up
    # to its end or the next such line (linear on a line of them), the next line's prefix (a rank's) bounded.
    _sig("compiled-state-dict-prefix",
         _MISSING + r"[\[{]?[\"'][\w.]{0,200}?\b_orig_mod\." + _REST_OF_LINE + r"Unexpected key\(s\) in state_dict: "
         r"[\[{]?[\"'](?![\w.]{0,200}?\b_orig_mod\.)|"
         + _MISSING + r"[\[{]?[\"'](?![\w.]{0,200}?\b_orig_mod\.)" + _REST_OF_LINE + r"Unexpected key\(s\) in "
         r"state_dict: [\[{]?[\"'][\w.]{0,200}?\b_orig_mod\.",
         "The checkpoint and the model disagree on torch.compile's `_orig_mod.` prefix: torch.compile returns an "
         "OptimizedModule that holds the model as `_orig_mod`, so a compiled model's state_dict keys all start with "
         "`_orig_mod.`. A checkpoint saved from the compiled model does not load into a plain one, and a plain model's "
         "checkpoint (one saved before torch.compile was added) does not load into the compiled module.",
         "Save and load the model inside: model._orig_mod.state_dict() / model._orig_mod.load_state_dict(sd) (under DDP "
         "ddp.module._orig_mod), or load the weights before torch.compile, or compile in place with model.compile(), "
         "which keeps the keys; for a checkpoint already saved, strip the prefix: {k.replace('_orig_mod.', ''): v for k, "
         "v in sd.items()} (and 'module.' if it was saved under DDP). A restart fails the same way.", retry=False),
    # Round 163 (live): model.load_state_dict given a whole checkpoint dict, not the model's state_dict inside it:
    # torch's Module.load_state_dict (torch/nn/modules/module.py) lists that dict's top-level keys as unexpected, bare
    # names with no dot: DeepSpeed's mp_rank_XX_model_states.pt ("module", "buffer_names", "optimizer", ...,
    # engine.py _save_checkpoint), a script's own {"model_state_dict", "optimizer_state_dict", "epoch"} (torch's
    # tutorial) or Lightning's {"state_dict", "epoch", "optimizer_states"}. Both a weights key and a training-state key
    # must be there; a real parameter's key has a dot (module.encoder.weight, a DDP prefix, is ckpt-model-mismatch's).
    # torch before 0.4 raised on the first such key alone (KeyError: 'unexpected key "epoch" in state_dict'). The
    # keys of such a dict are few: read within the line's first 1000 characters (linear on a line of that prefix).
    _sig("ckpt-whole-dict-as-state-dict", r"Unexpected key\(s\) in state_dict: "
         r"(?=[^\n]{0,1000}?\"(?:module|model|net|model_state|(?:\w+_)?state_dict)\")"
         r"(?=[^\n]{0,1000}?\"" + _CKPT_TOP + r"\")|"
         r"unexpected key \"(?:state_dict|model_state_dict|" + _CKPT_TOP + r")\" in state_dict",
         "model.load_state_dict was given a whole checkpoint dict, not the model's weights: its top-level keys (the "
         "weights under one of them, beside the optimizer's state, the step or epoch...) are what load_state_dict "
         "reports as unexpected, and every parameter as missing. DeepSpeed's mp_rank_XX_model_states.pt keeps the "
         "weights under 'module'; a script's own torch.save({...}) under the key it chose ('model_state_dict', "
         "'model'); Lightning's under 'state_dict'.",
         "Pass the weights inside the dict: model.load_state_dict(ckpt['module']) for a DeepSpeed model-states file "
         "(or engine.load_checkpoint(DIR, load_module_only=True); under ZeRO, get_fp32_state_dict_from_zero_checkpoint"
         "(DIR)), ckpt['model_state_dict'] or the key your own save used, ckpt['state_dict'] for Lightning (without its "
         "'model.' prefix if the names differ). A restart fails the same way.", retry=False),
    # Round 163 (live): torch's optimizers read their hyperparameters and buffers by name in step (torch/optim/sgd.py
    # _init_group `group["momentum"]`, adam.py step `group["betas"]`, rmsprop.py `state["square_avg"]`, torch 1.x
    # `state['exp_avg']`), and Optimizer.load_state_dict checks only the number of groups and of parameters, never the
    # class: a KeyError for one of those names, raised where that optimizer's file reads it, is a saved state of another
    # optimizer (Adam's into SGD...). Not the LR schedulers' (lr_scheduler.py's initial_lr), nor optimizer.py's.
    _sig("optim-state-other-optimizer", r"torch[/\\]optim[/\\](?!lr_scheduler|swa_utils|optimizer\.py)\w+\.py\", line \d+,"
         r" in \w+\n[^\n]*?\b(?:group|state)\[[\"'](?P<key>\w+)[\"']\][^\n]*\n(?:[^\n]*\n){0,2}?[^\n]*?KeyError: "
         r"'(?P=key)'",
         "The optimizer's state loaded with optimizer.load_state_dict was saved by another kind of optimizer (Adam's "
         "into SGD, SGD's into Adam...): torch checks only that the number of parameter groups and parameters match, "
         "so the step then reads a hyperparameter (momentum, betas) or a per-parameter buffer (exp_avg, square_avg) "
         "the saved state does not have.",
         "When the optimizer changes, do not load the old optimizer state: load the model's weights only and let the "
         "new optimizer start fresh (DeepSpeed: engine.load_checkpoint(DIR, load_optimizer_states=False, "
         "load_lr_scheduler_states=False), or load_module_only=True); or resume with the optimizer the checkpoint was "
         "saved with. A restart fails the same way.", retry=False),
    # Round 163 (live): DeepSpeed's zero_to_fp32 (get_fp32_state_dict_from_zero_checkpoint, the zero_to_fp32.py script)
    # reads ZeRO checkpoints only. One saved without ZeRO (stage 0) keeps param_shapes None in its model states
    # (utils/zero_to_fp32.py parse_model_states: `for s in param_shapes:`), or its optimizer file holds no zero_stage
    # (parse_optim_states: "{file} is not a zero checkpoint").
    _sig("zero-to-fp32-not-zero", r"\bin parse_model_states\n[^\n]*?\bfor \w+ in param_shapes:[^\n]*\n(?:[^\n]*\n){0,2}?"
         r"[^\n]*?TypeError: 'NoneType' object is not iterable|_optim_states\.pt is not a zero checkpoint",
         "DeepSpeed's zero_to_fp32 (get_fp32_state_dict_from_zero_checkpoint, convert_zero_checkpoint_to_fp32_state_"
         "dict, the zero_to_fp32.py script) reads ZeRO checkpoints only, and this one was saved without ZeRO "
         "(zero_optimization absent or stage 0): its model states record no ZeRO parameter shapes, and its optimizer "
         "state is not in ZeRO's partitioned files.",
         "A checkpoint saved without ZeRO already holds the full weights: torch.load DIR/TAG/mp_rank_00_model_states.pt "
         "and load its 'module' entry (model.load_state_dict(sd['module'])), or engine.load_checkpoint(DIR, "
         "load_module_only=True); keep zero_to_fp32 for checkpoints of ZeRO stages 1-3. A restart fails the same way.",
         retry=False),
    # Round 174 (live): transformers' from_pretrained finding parameters whose checkpoint shapes differ from the model's.
    # 5.x logs a LOAD REPORT ("Reinit due to size mismatch") and raises (utils/loading_report.py,
    # log_state_dict_report): "You set `ignore_mismatched_sizes` to `False`, thus raising an error."; 4.x appended to
    # load_state_dict's "size mismatch for ..." (modeling_utils.py, _load_pretrained_model) "You may consider adding
    # `ignore_mismatched_sizes=True` in the model `from_pretrained` method." (5.x: "... to `from_pretrained(...)`").
    # Before sigmessages.py's ckpt-model-mismatch, which reads the 4.x text's load_state_dict words.
    _sig("hf-head-size-mismatch", r"You set `ignore_mismatched_sizes` to `False`, thus raising an error|"
         r"You may consider adding `ignore_mismatched_sizes=True`",
         "transformers' from_pretrained found parameters whose shapes in the checkpoint differ from the model's (the "
         "report lists them, size mismatch for ...): most often a new head, a classifier built for another number of "
         "labels (num_labels) or a resized vocabulary; it does not start such parameters afresh unless told to.",
         "For a new head, pass ignore_mismatched_sizes=True to from_pretrained (the listed parameters start fresh; "
         "train them); if layers other than the head mismatch, build the model with the checkpoint's own config "
         "(AutoConfig.from_pretrained of the same directory). A restart fails the same way.", retry=False),
    # Round 194 (live): configuration_auto.py AutoConfig.from_pretrained: "The checkpoint you are trying to load has model type `X` but
    # Transformers does not recognize this architecture." (package-too-old reads it as a transformers older than the
    # model), read here only under save_pretrained's own progress bar of 5.x ("Writing model shards: 100%") a few
    # dozen lines before it in the same stream: this transformers itself had just written the model whose type it
    # does not know, so the type is the user's own class's, never registered with the Auto classes. Before
    # sigmessages.py's package-too-old; read with the lines before the error (CKPT_READS_BEFORE).
    _sig("hf-custom-model-unregistered", r"Writing model shards:[^\n]{0,40}100%[^\n]*\n(?:[^\n]*\n){0,60}?[^\n]*"
         r"The checkpoint you are trying to load has model type `[^`\n]+` but Transformers does not recognize this "
         r"architecture",
         "The run saved a model with save_pretrained and then loaded a checkpoint through an Auto class "
         "(AutoModel/AutoConfig.from_pretrained) whose model_type this transformers does not know: the user's own "
         "PretrainedConfig/PreTrainedModel classes, which the Auto classes only know once registered in the process "
         "that loads (transformers itself wrote that model_type, so it is not a too-old release).",
         "Load with the model's own class (MyModel.from_pretrained(dir)), or register it before loading: "
         "AutoConfig.register(MyConfig.model_type, MyConfig) and AutoModel.register(MyConfig, MyModel) (or "
         "MyConfig.register_for_auto_class() / MyModel.register_for_auto_class(\"AutoModel\") before save_pretrained "
         "and from_pretrained(..., trust_remote_code=True)). A restart fails the same way.", retry=False),
    # Round 189 (live): nn.Module.load_state_dict (torch/nn/modules/module.py, strict=True) reports missing keys and no
    # other error: its "Missing key(s) in state_dict: ..." line (inserted first) is the last of the report, with no
    # "Unexpected key(s)" or "size mismatch for" line after it. The file holds a part of what the model has. Before
    # sigmessages.py's ckpt-model-mismatch, which reads every such report.
    _sig("state-dict-partial-strict", _MISSING + r"(?P<ev>\"[^\n]{0,2000}?\")\.[ \t]*(?:\n(?![^\n]{0,80}?(?:Unexpected "
         r"key\(s\) in state_dict|size mismatch for ))|\Z)",
         "load_state_dict (strict=True, its default) found parameters of the model that the file does not hold, and "
         "nothing in the file that the model lacks: the file holds only part of the model (the adapter weights alone, "
         "a LoRA/PEFT save of its lora_ entries; only the trainable parameters; one submodule's state_dict; a save "
         "that left out tied weights), or the model has layers the saved one did not (more layers, a new head, "
         "adapters added since).",
         "Load a partial file over complete weights: load the base model's own weights first, then the file with "
         "strict=False, and check what it reports (r = model.load_state_dict(sd, strict=False); assert not "
         "r.unexpected_keys, and every key in r.missing_keys is one the file was never meant to hold); or save the "
         "whole state_dict (a tied model's file written by safetensors.torch.save_model keeps one name of each "
         "shared tensor: read it with safetensors.torch.load_model(model, path), which ties it back); if layers are "
         "missing, build the model with the configuration it was saved with. A restart fails the same way.",
         retry=False),
)

# Read with the lines before a rank's error too (sigmessages.READS_BEFORE): DeepSpeed's warning is logged before the
# script's traceback, outside it; save_pretrained's progress bar before the load's.
CKPT_READS_BEFORE = tuple(s for s in CHECKPOINT_SIGNATURES if s.name in ("ds-ckpt-no-latest",
                                                                         "hf-custom-model-unregistered"))

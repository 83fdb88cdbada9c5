"""Failure signatures of torch's FullyShardedDataParallel (FSDP1), split from sigtorch.py's table (which splices them in
this place, so the order of the whole table is unchanged): a state-dict type that was never set, CPU offload refused
with NO_SHARD, a parameter's name missing from the state dict, its post-backward hook refused under inference mode
(round 129), a process whose current CUDA device is not the rank's, CPU parameters with sync_module_states (round
111), the full-state-dict gather at save out of GPU memory (round 135), and a parameter read while FSDP (FSDP2's
fully_shard too) had freed its unsharded storage (round 148). Each pattern is the wording of the component
that prints it (torch/distributed/fsdp/*.py, cited at each), never one log's. The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

FSDP_SIGNATURES: tuple[Signature, ...] = (
    # FullyShardedDataParallel.set_state_dict_type (torch/distributed/fsdp/fully_sharded_data_parallel.py, 2.0+):
    # `state_dict_config_type = _state_dict_type_to_config[state_dict_type]`; 1.13-2.0's state_dict_type():
    # `state_dict_config = _state_dict_type_to_config[state_dict_type]()`. A KeyError: None there is a caller that had no
    # state-dict type to give: the HF Trainer loading an FSDP checkpoint before accelerator.prepare (transformers main
    # of September 2023, huggingface/transformers#26159), accelerate's FSDP plugin without fsdp_state_dict_type.
    _sig("fsdp-state-dict-type-unset", r"_state_dict_type_to_config\[state_dict_type\](?:\(\))?\n(?:\[rank\d+\]:)?"
         r"(?:[ \t]*[~^]+[ \t]*\n(?:\[rank\d+\]:)?)?[ \t]*KeyError: None",
         "FSDP was asked to save or load a checkpoint with a state-dict type of None: the code that called it had "
         "no FSDP state-dict type set yet, most often the HF Trainer loading an FSDP checkpoint to resume before "
         "accelerate had wrapped the model (a transformers of September 2023), or an accelerate FSDP plugin (or "
         "fsdp_config) without fsdp_state_dict_type.",
         "Upgrade transformers and accelerate (the Trainer loads FSDP checkpoints after accelerator.prepare), and set "
         "the state-dict type explicitly: fsdp_state_dict_type SHARDED_STATE_DICT or FULL_STATE_DICT in the accelerate "
         "config or the Trainer's fsdp_config, the same one the checkpoint was saved with. A restart fails the same "
         "way.", retry=False),
    # torch/distributed/fsdp/_unshard_param_utils.py (_validate_unshard_params_args): `raise NotImplementedError(
    # "offload_to_cpu=True and NO_SHARD is not supported yet")` when a unit's handle does not shard, as FSDP on one GPU
    # (world size 1) does not. Before PyTorch's _should_unshard_params skipped NO_SHARD, a FULL_STATE_DICT save with
    # FullStateDictConfig(offload_to_cpu=True) went through it (accelerate's save_fsdp_model set offload_to_cpu for one
    # process too until huggingface/accelerate#1745, in 0.22); summon_full_params(offload_to_cpu=True) still does.
    _sig("fsdp-no-shard-offload", r"offload_to_cpu=True and NO_SHARD is not supported",
         "FSDP was asked to gather the full parameters onto the CPU (offload_to_cpu=True: a FULL_STATE_DICT checkpoint "
         "save, or summon_full_params) for a model it does not shard: FSDP on a single GPU (world size 1) runs as "
         "NO_SHARD, and that PyTorch's FSDP refuses the CPU offload there. The training itself ran; the save fails.",
         "On one GPU, save without the CPU offload (FullStateDictConfig(offload_to_cpu=False), offload_to_cpu=False in "
         "summon_full_params) or train without FSDP; with the HF Trainer or Accelerate upgrade accelerate (>= 0.22 "
         "offloads only when there are several processes) and PyTorch; or run on two or more GPUs. A restart fails "
         "the same way.", retry=False),
    # Round 135 (tatsu-lab/stanford_alpaca#65): FSDP's full-state-dict post hook clones each gathered parameter
    # (torch/distributed/fsdp/_state_dict_utils.py _full_post_state_dict_hook, 2.0+, and fully_sharded_data_parallel.py
    # before it: `warnings.warn(f"Failed to clone() tensor with name {fqn} on rank {rank}. This may mean ... Please
    # check clone implementation of {fqn}. Error: {str(e)}")`, "on rank" from 2.0) and warns instead of raising. Read
    # from its last words (that warning's own, on one line or wrapped) when the error it quotes is the GPU's
    # out-of-memory (the clone on the GPU, no offload_to_cpu), never another error (a CPU allocator's, a tensor without
    # storage).
    _sig("fsdp-full-state-dict-gpu-oom", r"Please check clone\s+implementation of \S+\s+Error: (?:CUDA out of memory|"
         r"CUDA error: out of memory|[\w.]*OutOfMemoryError)",
         "Saving the model through FSDP's full state dict (model.state_dict() under FULL_STATE_DICT: the HF Trainer's "
         "or a script's save at the end of training) gathers every sharded parameter whole and clones it on the GPU, "
         "and that gather ran out of GPU memory: training fit because each rank held only its shard, the full "
         "weights do not fit beside it. The saved file is missing weights or broken.",
         "Gather onto the CPU and on rank 0 only: with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, "
         "FullStateDictConfig(offload_to_cpu=True, rank0_only=True)): state = model.state_dict() (what accelerate's "
         "FULL_STATE_DICT save does), or save a SHARDED_STATE_DICT (fsdp_state_dict_type: SHARDED_STATE_DICT) and "
         "consolidate it offline. A restart fails the same way at the save.", retry=False),
    # torch/distributed/fsdp/_state_dict_utils.py (_common_unshard_post_state_dict_hook, the FULL_STATE_DICT and
    # SHARDED_STATE_DICT post-hooks): `raise AssertionError(f"FSDP assumes {fqn} is in the state_dict but the
    # state_dict only has {state_dict.keys()}. prefix=..., module_name=..., param_name=... rank=...")`; the keys may
    # wrap as pasted (pytorch/pytorch#87815, the October 2022 nightlies' regression).
    _sig("fsdp-state-dict-fqn-missing", r"FSDP assumes \S+ is in the state_dict\s+but the state_dict only\s+has",
         "FSDP's state-dict hook did not find one of the wrapped module's original parameters under its full name in "
         "the state_dict that module returned (it held only the flattened parameters, or other names): the module's "
         "state_dict() was overridden or filtered, the module tree was changed after FSDP wrapped it (wrappers or "
         "submodules replaced), or a bug of that PyTorch build (the nightlies of late October 2022 failed so on any "
         "nested FSDP model saving a FULL_STATE_DICT).",
         "Take the state dict from the FSDP root inside FSDP.state_dict_type(...) without overriding state_dict() "
         "on wrapped modules (filter the returned dict instead), apply other wrappers (activation checkpointing, "
         "adapters) before FSDP wraps, and where a stock model fails on a nightly or a new release, use the "
         "previous PyTorch release. A restart fails the same way.", retry=False),
    # Round 129: torch/distributed/fsdp/_runtime_utils.py (_register_post_backward_hook, FSDP1 of torch 2.x; older
    # releases' fully_sharded_data_parallel.py, p_assert in a loop over the handles, the same words): `_p_assert(temp_flat_param.grad_fn is not None, "The
    # `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook")`, reached only with
    # gradients enabled and a flat parameter that requires grad, so it fails for a parameter without autograd history:
    # an inference tensor (the model run under torch.inference_mode(), pytorch/pytorch#113203). _p_assert prints the
    # message alone on each rank before raising the AssertionError.
    _sig("fsdp-inference-mode", r"The `?grad_fn`? is needed to access the `?AccumulateGrad`? and register the "
         r"post-backward hook",
         "FSDP could not register its post-backward hook because the flat parameters had no autograd history: the "
         "FSDP-wrapped model had run under torch.inference_mode() (an evaluation or sanity-check pass before "
         "training, such as lit-gpt's validate() before its fix), which leaves its parameters inference tensors, and "
         "training then ran on them.",
         "Evaluate an FSDP model under torch.no_grad(), not torch.inference_mode() (lit-gpt changed its scripts so, "
         "Lightning-AI/lit-gpt#703: update it), and do not build or load the model under inference_mode. A restart "
         "fails the same way.", retry=False),
    # torch/distributed/fsdp/_flat_param.py ("Expects tensor to be on the compute device {}") and _init_utils.py
    # ("Inconsistent compute device and `device_id` on rank {}: {} vs {}"): FSDP builds its tensors on
    # torch.cuda.current_device(), which is cuda:0 on every rank that never called set_device.
    _sig("fsdp-current-device", r"Expects tensor to be on the compute device cuda:\d+|"
         r"Inconsistent compute device and `?device_id`? on rank \d+",
         "FSDP runs on a process whose current CUDA device is not the rank's GPU: torch.cuda.set_device(local_rank) "
         "was never called (every rank's current device is cuda:0), so the tensors FSDP builds on the current device "
         "and the GPU named by device_id (or the module's) differ.",
         "Call torch.cuda.set_device(local_rank) in every rank before init_process_group and FSDP, and give FSDP "
         "device_id=torch.cuda.current_device(). A restart fails the same way.", retry=False),
    # Round 111: torch/distributed/fsdp/_init_utils.py (_check_module_states_for_sync_module_states, before FSDP
    # broadcasts rank 0's parameters and buffers): `raise ValueError("The module has CPU parameters or buffers when
    # `sync_module_states=True`, which requires them to be on GPU. Please specify the `device_id` argument or move the
    # module to GPU before passing it to FSDP.")`. Not its warning _warn_cpu_init ("The passed-in `module` is on CPU
    # ... must also be on GPU device to work with the `sync_module_states=True` flag"), which is no failure.
    _sig("fsdp-cpu-params-sync-states", r"The module has CPU parameters or buffers when `?sync_module_states=True`?",
         "FSDP was to broadcast rank 0's weights to the other ranks (sync_module_states=True: Accelerate's "
         "fsdp_sync_module_states, a recipe's own FSDP setup) but parts of the module were still on the CPU when it "
         "was wrapped, and that broadcast runs on the GPU: no device_id was given for a model built on the CPU, or "
         "part of it stays on the CPU, such as a QLoRA base quantized on the CPU (torchtune's multi-GPU LoRA recipe "
         "with model.quantize_base=True before torchtune 0.2 supported QLoRA with FSDP).",
         "Give FSDP device_id=torch.cuda.current_device() (it then moves the module to the rank's GPU before the "
         "broadcast) or move the model to that GPU before wrapping it; for QLoRA on several GPUs use a release that "
         "supports it with FSDP (torchtune >= 0.2's distributed recipe with a qlora config; bitsandbytes with "
         "bnb_4bit_quant_storage under Accelerate), or the single-device QLoRA recipe. A restart fails the same way.",
         retry=False),
    # Round 148 (pytorch/pytorch#181832): ATen's checkInBoundsForStorage (aten/src/ATen/native/Resize.h): `"setStorage:
    # sizes ", size, ", strides ", stride, "," " storage offset ", ..., ", and itemsize ", ..., " requiring a storage
    # size of ", ..., " are out of bounds for storage of size ", new_storage_size_bytes)`, read from its last words with
    # a storage of size 0: a view or a parameter set on storage that was resized to 0. FSDP frees the unsharded
    # parameters so (FSDP2's reshard_after_forward, FSDP1's flat parameter) and gathers them again only through its
    # hooks. Only where FSDP is named in the failure's streams (its frames, fully_shard, FSDP2's warning `FSDP2-wrapped
    # module (...) returned a view tensor`): DeepSpeed's ZeRO-3 empties partitioned parameters too, and a bare line
    # does not tell which (pytorch/pytorch#183702's one-line excerpt stays generic).
    _sig("fsdp2-unsharded-param-freed", r"\bare out of bounds\s+for\s+storage of size 0\b",
         "A parameter that FSDP manages was read while FSDP had freed its unsharded (all-gathered) storage: FSDP "
         "(fully_shard/FSDP2 with reshard_after_forward, FSDP1's flat parameters) resizes that storage to 0 after a "
         "module's forward and all-gathers it again only through its hooks, and this read bypassed them: backward "
         "through a path FSDP's pre-backward hook never saw (an in-place op on a view of a wrapped module's output, "
         "such as out += y after a squeeze; a tensor kept from a forward, a cache or auxiliary logits, used in a later "
         "loss; a module of a grouped fully_shard([...]) called again later in the same iteration; a custom autograd "
         "function reading the weight in its backward), or a parameter used or printed outside the wrapped module's "
         "forward.",
         "Find the path that bypasses FSDP's hooks and make it go through them: use out-of-place ops on a wrapped "
         "module's outputs (out = out + y, or .clone() the output before an in-place op; FSDP2 warns 'returned a view "
         "tensor' since PyTorch's fix #181850), compute every loss from the outputs of the current forward, shard a "
         "module that is called more than once per iteration on its own (fully_shard(module), not in a list), and "
         "read parameters outside forward under summon_full_params (FSDP1) or model.unshard() (FSDP2). As a "
         "workaround, reshard_after_forward=False on the module involved keeps its parameters gathered until "
         "backward (more memory). A restart fails the same way.", retry=False,
         aside_if=lambda m, texts: not _names_fsdp(texts)),
    # Round 165: FSDP1's _init_device_handle (torch/distributed/fsdp/_init_utils.py, torch 2.4+): without device_id and
    # with every parameter on the CPU it takes torch._C._get_accelerator(), and on a machine without one refuses
    # (FullyShardedDataParallel has no CPU mode unless device_id=torch.device("cpu") is given).
    _sig("fsdp-no-accelerator", r"FSDP needs a non-CPU accelerator device, but no accelerator device is detected",
         "FullyShardedDataParallel (FSDP1) was given a model on the CPU and no device_id on a machine without a GPU "
         "(or other accelerator): FSDP1 runs on the accelerator it finds and refuses when there is none. Either the "
         "node has no usable GPU (a CPU-only node, a CPU build of torch, a container without GPUs) or the run is "
         "meant for CPUs.",
         "For a CPU run with gloo pass device_id=torch.device(\"cpu\") to FullyShardedDataParallel, or use FSDP2 "
         "(torch.distributed.fsdp.fully_shard with init_device_mesh(\"cpu\", ...)), which shards on the CPU; for a "
         "GPU run check nvidia-smi and torch.cuda.is_available() on that node. A restart fails the same way.",
         retry=False),
)


# What names FSDP in a failure's streams: its frames (torch/distributed/fsdp/, _fsdp_state.py, _fsdp_param.py),
# fully_shard, FSDP2's own warnings and errors ("FSDP2-wrapped module", FSDPModule), FullyShardedDataParallel. Case
# matters: a config dump's fsdp_config (accelerate env, HF Trainer arguments) is no FSDP run.
_FSDP_NAMED = re.compile(r"fully_shard|FSDP|FullyShardedDataParallel|/fsdp/|\b_fsdp_")


def _names_fsdp(texts: Iterable[str]) -> bool:
    return any(_FSDP_NAMED.search(t) for t in texts)

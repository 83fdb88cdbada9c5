"""Failure signatures of activation checkpointing and memory-saving options, from round 195 of issue 45 (live: broken
users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8): torch.utils.checkpoint's reentrant variant given
keyword arguments for the checkpointed function, checkpoint_sequential given a module that is not a sequence of
layers, torch's checkpoint options handed to DeepSpeed's checkpoint (which passes keyword arguments on to the
function), DeepSpeed's contiguous memory checkpointing without its number of layers, and partial optimizer offload
(offload_optimizer.ratio) outside ZeRO-3. Each pattern is the wording of the component that prints it
(torch/utils/checkpoint.py, deepspeed/runtime/activation_checkpointing/checkpointing.py, deepspeed/runtime/zero/
config.py), and the frames where a message is not its own, never one log's. sigrounds.py places this table just
before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

ACTCKPT_SIGNATURES: tuple[Signature, ...] = (
    # torch/utils/checkpoint.py's checkpoint(): `if kwargs and use_reentrant: raise ValueError("Unexpected keyword
    # arguments: " + ",".join(kwargs))` (since torch 1.x; use_reentrant left out is reentrant, with a warning, up to
    # 2.13). Only in checkpoint()'s own frame: checkpoint_sequential's same words refuse every keyword argument.
    _sig("checkpoint-reentrant-kwargs",
         r"checkpoint\.py\"?, line \d+, in checkpoint\n(?:[^\n]*\n){0,4}?[^\n]*?"
         r"(?P<ev>ValueError: Unexpected keyword arguments: [^\n]{0,120})",
         "torch.utils.checkpoint.checkpoint ran the reentrant way (use_reentrant=True, or use_reentrant left out, "
         "which is still reentrant) and was given keyword arguments for the checkpointed function (the message "
         "names them): the reentrant checkpoint passes only positional arguments on, and refuses keyword ones.",
         "Pass use_reentrant=False (non-reentrant checkpointing hands keyword arguments to the function, and is "
         "what torch recommends), or give those arguments positionally or bound beforehand "
         "(functools.partial(block, attn_mask=mask)). A restart fails the same way.", retry=False),
    # checkpoint_sequential(functions, segments, input): `if isinstance(functions, torch.nn.Sequential): functions =
    # list(functions.children())`, then `segment_size = len(functions) // segments`: any other module has no len().
    _sig("checkpoint-sequential-not-sequential",
         r"checkpoint\.py\"?, line \d+, in checkpoint_sequential\n(?:[^\n]*\n){0,4}?[^\n]*?"
         r"(?P<ev>TypeError: object of type '[\w.]+' has no len\(\))",
         "torch.utils.checkpoint.checkpoint_sequential splits a sequence of layers into segments: it takes an "
         "nn.Sequential or a list (or nn.ModuleList) of modules run one after the other, and was given another "
         "module (a model whose layers sit inside it), which has no length.",
         "Give it the layers themselves: checkpoint_sequential(model.layers, segments, x) with the ModuleList, or "
         "build that part as an nn.Sequential; for a model whose forward does more than chain its layers, call "
         "torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=False) per layer in forward instead. A restart "
         "fails the same way.", retry=False),
    # deepspeed.checkpointing.checkpoint(function, *args, **kwargs) (DeepSpeed 0.16+: "Tensor arguments passed by
    # keyword participate in autograd") wraps the function in function_with_kwargs, which hands every keyword
    # argument on to it; torch.utils.checkpoint's own options then reach the module's forward: "Block.forward() got
    # an unexpected keyword argument 'use_reentrant'". Only torch's options, under that frame.
    _sig("ds-checkpoint-kwarg-to-forward",
         r"activation_checkpointing[/\\]checkpointing\.py\"?, line \d+, in function_with_kwargs\n"
         r"(?:[^\n]*\n){0,12}?[^\n]*?(?P<ev>TypeError: [\w.]+\(\) got an unexpected keyword argument "
         r"'(?:use_reentrant|preserve_rng_state|determinism_check|context_fn|debug|early_stop)')",
         "DeepSpeed's deepspeed.checkpointing.checkpoint(function, *args, **kwargs) was called with one of "
         "torch.utils.checkpoint's options (use_reentrant, preserve_rng_state...): DeepSpeed's checkpoint has no such "
         "option and passes every keyword argument on to the checkpointed function, whose forward does not take it.",
         "Drop the option from the deepspeed.checkpointing.checkpoint call (its behaviour is set by "
         "deepspeed.checkpointing.configure or the ds_config's activation_checkpointing section), or call "
         "torch.utils.checkpoint.checkpoint(..., use_reentrant=False) instead of DeepSpeed's. A restart fails the "
         "same way.", retry=False),
    # deepspeed/runtime/activation_checkpointing/checkpointing.py configure(): `if CONTIGUOUS_CHECKPOINTING: assert
    # num_layers is not None, "Must specify the number of layers with contiguous memory checkpointing"`.
    _sig("ds-contiguous-ckpt-no-layers",
         r"(?P<ev>(?:AssertionError: )?Must specify the number of layers with contiguous memory checkpointing)(?!\")",
         "DeepSpeed's activation checkpointing has contiguous memory optimization on (contiguous_memory_optimization "
         "in the ds_config's activation_checkpointing, or contiguous_checkpointing=True to "
         "deepspeed.checkpointing.configure), which preallocates a buffer slot per checkpointed layer, and was not "
         "told how many: number_checkpoints (configure's num_checkpoints) is not set.",
         "Set \"number_checkpoints\" in activation_checkpointing to the number of checkpointed calls per forward (the "
         "number of checkpointed layers), or num_checkpoints=... in configure(); or turn "
         "contiguous_memory_optimization off. A restart fails the same way.", retry=False),
    # deepspeed/runtime/zero/config.py's offload_ratio_check: `if offload_config and offload_config.ratio < 1.0: assert
    # self.stage == ZeroStageEnum.weights, "Partial offloading only supported for ZeRO Stage 3."`, which pydantic
    # reports as "1 validation error for DeepSpeedZeroConfig ... Assertion failed, ...".
    _sig("ds-offload-ratio-stage", r"Partial offloading only supported for ZeRO Stage 3",
         "The ds_config's zero_optimization.offload_optimizer sets ratio below 1.0 (offload only part of the "
         "optimizer to the CPU), which DeepSpeed supports under ZeRO stage 3 only, and the stage is 1 or 2: "
         "DeepSpeed's config validation refuses it.",
         "Drop ratio from offload_optimizer (or set it to 1.0) to offload the whole optimizer under stage 1 or 2, or "
         "use stage 3 where partial offload is meant. A restart fails the same way.", retry=False),
)

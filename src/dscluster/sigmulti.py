"""Failure signatures of scripts that hold several models at once, from round 196 of issue 45 (live: broken users'
scripts run for real on torch 2.13 and DeepSpeed 0.19.8): a teacher, a frozen reference model, an EMA copy or a second
DeepSpeed engine beside the trained one. A teacher built without its weights (meta tensors), an EMA over state_dict()
scaling an integer buffer in place, a distillation loss between a student and a teacher whose outputs differ in size,
and a second deepspeed.initialize given both the script's argparse args (which carry --deepspeed_config) and a config
of its own. (An EMA copy updated in place outside torch.no_grad() is signorm.py's leaf-inplace-requires-grad, which
round 197 found for a running statistic kept as a parameter.) Each pattern is the wording of the component that prints
it (torch's autograd, deepspeed/__init__.py's initialize), never one log's. sigrounds.py places this table just after
the activation checkpointing one (sigactckpt.py), before the exception messages' (sigmessages.py), so that these come
before ds-config-invalid's list and the generic refused-requirement answer."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

MULTI_SIGNATURES: tuple[Signature, ...] = (
    # deepspeed/__init__.py initialize(), since DeepSpeed 0.3: `if hasattr(args, "deepspeed_config") and
    # args.deepspeed_config is not None: assert config is None, "Not sure how to proceed, we were given deepspeed
    # configs in the deepspeed arguments and deepspeed.initialize() function call"`.
    _sig("ds-config-given-twice",
         r"(?P<ev>(?:AssertionError: )?Not sure how to proceed, we were given deepspeed configs in the deepspeed "
         r"arguments and deepspeed\.initialize\(\) function call)(?!\")",
         "deepspeed.initialize was given a DeepSpeed config twice: in args (the argparse namespace carries "
         "--deepspeed_config, args.deepspeed_config) and as config=. It happens most with a second engine in one "
         "script (a teacher, a reference or EMA model, a critic) made with its own config but the same args as the "
         "trained one's.",
         "Pass each engine's config one way only: for the engine with its own config call "
         "deepspeed.initialize(model=..., config=its_config) without args= (or with a copy of args whose "
         "deepspeed_config is None); keep args= for the engine that uses --deepspeed_config. A restart fails the "
         "same way.", retry=False),
    # torch/_prims_common/__init__.py check_same_device(): "Tensor on device meta is not on the expected device cpu!"
    # (torch 2.x's elementwise ops given a meta tensor beside a real one): a model built without data (accelerate's
    # init_empty_weights, torch.device("meta"), low_cpu_mem_usage) whose weights were never loaded; round 214: or one
    # loaded with assign=True whose persistent=False buffers no checkpoint holds.
    _sig("meta-tensor-compute",
         r"(?P<ev>RuntimeError: Tensor on device meta is not on the expected device \w+(?::\d+)?!?)",
         "A tensor on the meta device (shapes only, no data) met a real one in a computation: a model built without "
         "its weights (accelerate's init_empty_weights(), torch.device('meta'), from_pretrained's low_cpu_mem_usage "
         "or a device_map) whose weights were never loaded, such as a teacher or reference model kept only for its "
         "outputs; its outputs are meta tensors. Or the weights were loaded into a model built on meta "
         "(load_state_dict(..., assign=True)) but a buffer registered with persistent=False (rotary inv_freq, a "
         "causal mask, position ids) is in no checkpoint, so it is still on meta.",
         "Load the weights into the model before using it (accelerate's load_checkpoint_and_dispatch(model, path), "
         "or model.to_empty(device='cpu') then load_state_dict(torch.load(...))), or build it without "
         "init_empty_weights / the meta device. Buffers registered with persistent=False get no value from "
         "load_state_dict nor from to_empty: compute them again after loading (re-run the code of __init__ that "
         "fills them, on the real device) or build the model on the real device. A restart fails the same way.",
         retry=False),
    # torch's TensorIterator (aten/src/ATen/TensorIterator.cpp compute_types): "result type Float can't be cast to the
    # desired output type Long": an in-place op (or out=) whose result is floating on an integer or bool tensor.
    _sig("inplace-result-type-cast",
         r"(?P<ev>RuntimeError: result type \w+ can't be cast to the desired output type \w+)",
         "An in-place operation (mul_, add_, div_, lerp_, an out= argument) would write a floating-point result into "
         "an integer or bool tensor, which torch refuses: typically an EMA or weight average taken over "
         "state_dict() entries that include integer buffers (BatchNorm's num_batches_tracked, position ids, "
         "counters), or a mask or count tensor scaled in place.",
         "Average only the floating-point entries (if v.dtype.is_floating_point: v.mul_(d).add_(w, alpha=1 - d); "
         "else v.copy_(w)), or torch.optim.swa_utils.AveragedModel / get_ema_multi_avg_fn; elsewhere do the "
         "operation out of place (x = x * 0.5) or convert the tensor to float first. A restart fails the same way.",
         retry=False),
    # torch/nn/functional.py kl_div() -> torch.kl_div: the elementwise broadcast's "The size of tensor a (10) must
    # match the size of tensor b (11) at non-singleton dimension 1". Only under kl_div's own frame: the same words
    # elsewhere are any two tensors' shapes.
    _sig("kl-div-size-mismatch",
         r"functional\.py\"?, line \d+, in kl_div\n(?:[^\n]*\n){0,4}?[^\n]*?"
         r"(?P<ev>RuntimeError: The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at "
         r"non-singleton dimension \d+)",
         "F.kl_div got an input and a target of different shapes: in distillation the student's and the teacher's "
         "(log-)probabilities, whose last dimension is each model's number of classes or vocabulary size, so the "
         "two models' output heads differ (an added class, another tokenizer's vocabulary, a padded vocabulary); or "
         "the teacher saw another batch (other sizes or sequence lengths) than the student.",
         "Give the two distributions the same shape: the same label set and head size (or slice both to the shared "
         "classes / tokens, e.g. logits[..., :teacher_vocab]), the same tokenizer and batch for both models; print "
         "both shapes before the loss. A restart fails the same way.", retry=False),
)

"""Failure signatures of numerics that end a run (round 44 of issue 45): a training framework's own check that the
loss became NaN or infinite, a rank's gradients found NaN before they are reduced, and sampling from logits that
overflowed float16. Each pattern is the wording of the component that prints it, never one log's: detectron2's
trainer (engine/train_loop.py: `Loss became infinite or NaN at iteration=N!`; its proposal code: `Predicted boxes or
scores contain Inf/NaN. Training has diverged.`), the MAE/DeiT/DINO training loops (`Loss is nan, stopping
training`), Megatron-Core's gradient buffer (`found NaN in local grad norm ... before data-parallel communication
collective`, older `in backwards pass`), torch's clip_grad_norm_ with error_if_nonfinite, and ATen's multinomial
(`probability tensor contains either `inf`, `nan` or element < 0`). The loss scaler's minimum (DeepSpeed's, fairseq's)
stays in sigmessages.py (loss-scale-minimum). Round 173 adds torch's own refusals of an optimizer, LR scheduler or
GradScaler set up wrong (torch/optim/optimizer.py, torch/optim/lr_scheduler.py, torch/amp/grad_scaler.py). Round 176
adds autograd's refusals of a custom autograd.Function or torch.library custom op written wrong.
GradScaler set up wrong (torch/optim/optimizer.py, torch/optim/lr_scheduler.py, torch/amp/grad_scaler.py).
Round 177 (evaluation inside training) adds autograd's refusal of an inference tensor and c10d's of a collective given
something that is not a tensor (a metric's Python float).
sigmessages.py places this table after the model repositories' own and
before the training stack's. The real logs they are measured on are tests/data/failures."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

NUMERIC_SIGNATURES: tuple[Signature, ...] = (
    # detectron2's SimpleTrainer (write_metrics / _detect_anomaly), its RPN's check of the predicted boxes, and the
    # `if not math.isfinite(loss_value): print("Loss is {}, stopping training")` of MAE, DeiT, DINO, ConvNeXt.
    _sig("training-diverged", r"Loss became infinite or NaN at iteration=|Predicted boxes or scores contain Inf/NaN\. "
         r"Training has diverged|\bLoss is (?:nan|inf|-inf), stopping training",
         "Training diverged: the loss became NaN or infinite and the training loop's own check stopped the run. Most "
         "often the learning rate is too high for the batch (a config written for more GPUs or a larger batch, run "
         "on fewer without scaling the learning rate down), fp16/AMP overflow, or broken samples in the data.",
         "Lower the learning rate (scale it with the total batch size when you change GPUs or images per GPU), "
         "lengthen the warmup and clip gradients; check the data for broken samples (empty or invalid boxes, NaN "
         "values); with fp16/AMP try bf16 or fp32. Resumed with the same settings it diverges again.", retry=False),
    # Megatron-Core's check before the gradient reduction (param_and_grad_buffer.py / its rerun state machine:
    # "found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective",
    # older "... in backwards pass"), and torch.nn.utils.clip_grad_norm_(error_if_nonfinite=True). With reruns
    # enabled (--rerun-mode validate_results), rerun_state_machine.py's validate_result first logs "Unexpected result
    # nan on rank R at iteration #I invocation #N (message='found NaN ...')" and reruns the iteration to tell a
    # transient or faulty GPU ("Possible transient error!", "Possible persistent error!") from a result that is right
    # ("Correct result (but possible Application error) (found NaN ...)"): that first line names no cause yet, so only
    # the stop (reruns disabled: "Unexpected result nan (message='found NaN ...')", RuntimeError) and the verdict count.
    _sig("nan-gradients", r"(?<!\(message=')found (?:NaN|Inf) in local grad norm|Unexpected result [^\s(]+ "
         r"\(message='found (?:NaN|Inf) in local grad norm|for gradients from `parameters` is non-finite, so "
         r"it cannot be clipped",
         "A rank's gradients were NaN or infinite, and the training stack's check stopped the run before reducing "
         "them (Megatron-Core's grad-norm check, torch's clip_grad_norm_ with error_if_nonfinite): the forward or "
         "backward produced non-finite values, from a diverging run (learning rate, a broken batch), fp16 overflow, "
         "or a bug in a kernel (an attention or fused operator).",
         "Start from the iteration and rank it names: check that batch's data, lower the learning rate and clip "
         "gradients; turn off recently enabled fused kernels or options (gradient_accumulation_fusion, a new "
         "attention kernel) to find a kernel bug, and upgrade the library that has it. Megatron's rerun check tells "
         "whether it reproduces on another GPU: reproducible means data or code, not hardware.", retry=False),
    # ATen's multinomial (Distributions.cpp, the CUDA kernel's check): what generate's sampling calls.
    _sig("fp16-overflow-sampling", r"probability tensor contains either `?inf`?, `?nan`? or element < 0",
         "Sampling (torch.multinomial, as generate's do_sample calls it) got probabilities that are inf, NaN or "
         "negative: the model's logits were not finite, most often because it ran in float16 and its activations "
         "overflowed (long inputs, a model trained in bf16), or because its weights are already NaN from a diverged "
         "training.",
         "Load and run the model in bfloat16 (torch_dtype=torch.bfloat16, GPUs of compute capability 8.0+) or "
         "float32 instead of float16; if it persists in float32, the checkpoint itself is broken (NaN weights from a "
         "diverged training: check its training loss) and an earlier checkpoint or a new training is needed.",
         retry=False),
    # torch/optim/optimizer.py, Optimizer.add_param_group: a parameter already in another group (the same words since
    # torch 0.x). DeepSpeed's own check of the client optimizer ("occurs multiple times in optimizer.param_groups") is
    # ds-param-in-two-groups.
    _sig("optim-param-in-two-groups", r"ValueError: some parameters appear in more than one parameter group",
         "The optimizer was given param groups that share a parameter: a group built from model.parameters() (or a "
         "parent module) besides a group of one of its parts (a head or backbone with its own learning rate, a "
         "no-decay group whose name filter also matches the decay one's), or tied weights listed twice.",
         "Build the groups so each parameter is in exactly one: the rest group from the parameters not already "
         "taken (filter by name, or by id(p) against the other groups), decay and no-decay filters that exclude "
         "each other. A restart fails the same way.", retry=False),
    # torch/optim/lr_scheduler.py, LRScheduler.__init__ (and ReduceLROnPlateau's, SequentialLR's, ChainedScheduler's
    # checks): f"{type(optimizer).__name__} is not an Optimizer"; older releases "{} is not an Optimizer".format(...).
    _sig("scheduler-not-optimizer", r"TypeError: \w+ is not an Optimizer\b",
         "A torch LR scheduler was built on something that is not a torch.optim.Optimizer: the model (or its DDP "
         "wrapper) passed in the optimizer's place, another scheduler, or a wrapper optimizer that does not subclass "
         "torch's (the ZeRO, fp16 or bf16 optimizer deepspeed.initialize returns, another library's optimizer "
         "wrapper).",
         "Pass the optimizer object as the scheduler's first argument (StepLR(optimizer, ...)); with DeepSpeed build "
         "the scheduler on the torch optimizer you give deepspeed.initialize (or pass lr_scheduler= a function of the "
         "optimizer, or a \"scheduler\" section in the config). A restart fails the same way.", retry=False),
    # torch/optim/lr_scheduler.py, OneCycleLR.get_lr: stepped past total_steps (= epochs * steps_per_epoch).
    _sig("onecycle-past-total-steps", r"Tried to step \d+ times?\. The specified number of total steps is \d+",
         "OneCycleLR was stepped more times than the total_steps it was built with (total_steps, or epochs * "
         "steps_per_epoch): steps_per_epoch counted otherwise than the loop steps (len(dataset) // batch_size while "
         "the DataLoader keeps the last partial batch, the dataset's length before a DistributedSampler splits it, "
         "one step per micro-batch under gradient accumulation), more epochs than it was told, or a resume that "
         "restarts the loop without restoring the scheduler's count.",
         "Build it with steps_per_epoch=len(train_loader) (divided by the accumulation steps where the scheduler "
         "steps once per optimizer step) and the epochs the loop runs, or total_steps counted the same way; on "
         "resume load the scheduler's state_dict. A restart fails the same way.", retry=False),
    # torch/amp/grad_scaler.py (torch/cuda/amp/grad_scaler.py before 2.3), GradScaler.step: the optimizer had no
    # gradient to unscale ("No inf checks were recorded for this optimizer."). update() before any step recorded one
    # ("No inf checks were recorded prior to update.") is sigamp's gradscaler-update-without-step, read first (round
    # 204: update() on every micro-batch of an accumulation).
    _sig("gradscaler-no-grads", r"No inf checks were recorded for this optimizer",
         "GradScaler found no gradients on the optimizer's parameters when scaler.step (or scaler.update) ran: the "
         "gradients were cleared between backward and step (optimizer.zero_grad placed between them), backward was "
         "not called for this optimizer's loss, or the loss does not reach its parameters (frozen, another model's "
         "or another optimizer's parameters).",
         "Keep the order zero_grad, scaler.scale(loss).backward(), scaler.step(optimizer), scaler.update(); check "
         "that the optimizer holds the parameters the loss trains (requires_grad, the right model). A restart fails "
         "the same way.", retry=False),
    # Round 187 (live): torch/csrc/autograd/engine.cpp validate_outputs refusing a BUILT-IN backward's gradient of
    # another shape ("Function TBackward0 returned an invalid gradient at index 0 - got [104, 32] but expected shape
    # compatible with [100, 32]"). Generated nodes carry a numeric suffix (torch 1.10+: TBackward0, MmBackward0,
    # EmbeddingBackward0), a Python autograd.Function's node never does (class name + "Backward": autograd-function-
    # contract, below). A built-in formula returns the gradient of the tensor it saw, so the recorded shape went stale:
    # a parameter's .data was swapped for a tensor of another shape after something kept its old metadata - DDP's
    # reducer holds each parameter's gradient accumulator from wrapping on (transformers' resize_token_embeddings
    # assigns old_embeddings.weight.data in place, modeling_utils.py _get_resized_embeddings), or a forward's graph.
    _sig("param-shape-changed-in-place", r"Function \w+Backward\d+ returned an invalid gradient at index \d+ - got "
         r"\[[\d, ]*\] but expected shape compatible with \[[\d, ]*\]",
         "A parameter's shape changed in place after autograd or a wrapper had recorded it: its .data was replaced by "
         "a tensor of another shape (transformers' resize_token_embeddings does this, as do weight surgery and "
         "pruning) after the model was wrapped in DistributedDataParallel (its reducer keeps each parameter's "
         "gradient accumulator with the old shape) or between a forward and its backward; torch's built-in backward "
         "then hands a gradient of the new shape to a place that expects the old one.",
         "Change the model before wrapping it: resize_token_embeddings, new or pruned layers, then DDP(...) / "
         "accelerator.prepare / deepspeed.initialize (and build the optimizer after); if it must change later, wrap "
         "the changed module again. Never assign param.data between a forward and its backward. A restart fails the "
         "same way.", retry=False),
    # torch/csrc/autograd/python_function.cpp (a Python autograd.Function): backward's gradient count ("function
    # XBackward returned an incorrect number of gradients (expected N, got M)") and _save_variables ("save_for_backward
    # can only save variables, but argument N is of type T"); torch/csrc/autograd/engine.cpp validate_outputs
    # ("Function XBackward returned an invalid gradient at index N - got [..] but expected shape compatible with [..]",
    # "- expected dtype/device/type ...", and "invalid number of gradients - expected N, but got M").
    _sig("autograd-function-contract", r"returned an incorrect number of gradients \(expected \d+, got \d+\)|"
         r"Function \w+ returned an invalid gradient at index \d+ - (?:got \[|expected (?:dtype|device|type))|"
         r"invalid number of gradients - expected \d+, but got \d+|"
         r"save_for_backward can only save variables, but argument \d+ is of type",
         "A custom torch.autograd.Function breaks autograd's contract: its backward returns not one gradient per "
         "forward input (None for the non-tensor ones), or a gradient of another shape, dtype or device than that "
         "input; or its forward passes something other than tensors (or None) to ctx.save_for_backward.",
         "Fix the Function the message names: backward returns exactly as many values as forward takes inputs "
         "after ctx (None where no gradient), each shaped like its input (expand or sum the incoming gradient "
         "back to it); keep non-tensor values as attributes of ctx (ctx.scale = scale). torch.autograd.gradcheck "
         "on small double inputs checks it. A restart fails the same way.", retry=False),
    # torch/_library/autograd.py (torch.library.custom_op, torch 2.4 and later): backward through an op whose
    # register_autograd was never called.
    _sig("custom-op-no-autograd", r"Trying to backward through [\w.:]+ but no autograd formula was registered",
         "A torch.library custom op the loss goes through has no backward: torch.library.custom_op defines only "
         "the forward, and no torch.library.register_autograd (or op.register_autograd) was called for it.",
         "Register its backward with torch.library.register_autograd(\"lib::op\", backward, setup_context=...) "
         "in the module that defines the op (imported on every rank), or keep the op out of the trained path. A "
         "restart fails the same way.", retry=False),
    # Round 177: ATen's autograd (torch/csrc/autograd/variable.cpp / saved_variable.cpp, SavedVariable's check):
    # "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and
    # use it in autograd." (torch 1.9-2.x), newer: "... Please do not use Tensors created in inference mode in
    # computation tracked by autograd. To work around this, you can make a clone ...". A tensor made under
    # torch.inference_mode() (an evaluation or sanity pass: a lazily built cache, a buffer, a batch) reached a training
    # step's autograd graph. Not FSDP's post-backward hook (fsdp-inference-mode), nor "Inplace update to inference
    # tensor outside InferenceMode is not allowed" (another misuse, left generic).
    _sig("inference-tensor-saved", r"Inference tensors cannot be saved for backward",
         "A tensor created under torch.inference_mode() was used in a computation autograd records for backward: "
         "typically an evaluation or sanity-check pass run under inference_mode before or between training steps, "
         "during which the model built and kept a tensor (a lazily cached position table or mask, a buffer, a "
         "stored batch) that the training steps then reuse.",
         "Evaluate under torch.no_grad() instead of torch.inference_mode() when the model or its data are reused for "
         "training, or .clone() the cached tensor outside inference mode (build caches in __init__). A restart fails "
         "the same way.", retry=False),
    # Round 177: torch/distributed/distributed_c10d.py _check_single_tensor / _check_tensor_list, called by every
    # collective (all_reduce, broadcast, all_gather, reduce, ...): "Invalid function argument. Expected parameter
    # `NAME` of type torch.Tensor\n but got <class ...> instead." (torch 2.x; `of type List[torch.Tensor]` for the list
    # arguments), older torch "Expected parameter `NAME` to be of type torch.Tensor." A collective was given a Python
    # number or list (loss.item(), a metric accumulated as a float). Not "Invalid function argument: output_tensor_lists
    # should be a list" (all_gather_coalesced's own check, left generic).
    _sig("collective-arg-not-tensor", r"Invalid function argument\. Expected parameter `\w+` (?:to be )?of type "
         r"(?:torch\.Tensor|List\[torch\.Tensor\])",
         "A torch.distributed collective (all_reduce, broadcast, all_gather, reduce...) was given something that is "
         "not a tensor, or a list holding one: most often a metric or loss accumulated as a Python number "
         "(loss.item()) and then passed to dist.all_reduce to average it over ranks.",
         "Pass a tensor: keep the sum as a tensor (torch.tensor(value) on the process group's device), all_reduce "
         "it, then call .item(); or use dist.all_gather_object for Python objects. A restart fails the same way.",
         retry=False),
)

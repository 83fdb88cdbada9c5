"""Failure signatures of numerics that end a run (round 44 of issue 45): a training framework's own check that the
loss became NaN or infinite, a rank's gradients found NaN before they are reduced, and sampling from logits that
overflowed float16. Each pattern is the wording of the component that prints it, never one log's: detectron2's
trainer (engine/train_loop.py: `Loss became infinite or NaN at iteration=N!`; its proposal code: `Predicted boxes or
scores contain Inf/NaN. Training has diverged.`), the MAE/DeiT/DINO training loops (`Loss is nan, stopping
training`), Megatron-Core's gradient buffer (`found NaN in local grad norm ... before data-parallel communication
collective`, older `in backwards pass`), torch's clip_grad_norm_ with error_if_nonfinite, and ATen's multinomial
(`probability tensor contains either `inf`, `nan` or element < 0`). The loss scaler's minimum (DeepSpeed's, fairseq's)
stays in sigmessages.py (loss-scale-minimum). sigmessages.py places this table after the model repositories' own and
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
)

"""Failure signatures of gradient hooks, inspection and manipulation in a user's training loop, from round 222 of
issue 45 (live: broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8, CPU, gloo): a tensor hook
registered on a tensor that needs no gradient, a tensor hook that returns a gradient of another shape or dtype, a
module's full backward hook that returns the wrong number of gradients or sits next to an in-place operation,
torch.autograd.grad asked for the gradient of an input the output does not depend on, and a post-accumulate-grad hook
on a non-leaf tensor. Each pattern is torch's own
wording (torch/_tensor.py's register_hook, the autograd engine's hook and grad checks, torch/utils/hooks.py's
BackwardHook), never one log's. sigrounds.py places this table with the other round tables; the non-leaf .grad read
(nonleaf-grad-none) is sigzero3's, before its param-grad-none that reads the same AttributeError."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

GRADHOOK_SIGNATURES: tuple[Signature, ...] = (
    # torch/_tensor.py, Tensor.register_hook: "cannot register a hook on a tensor that doesn't require gradient".
    _sig("grad-hook-no-requires-grad", r"cannot register a hook on a tensor that doesn't require gradient",
         "The script called register_hook on a tensor that does not require a gradient: input data, a tensor made "
         "under torch.no_grad() or inference_mode, a detached tensor, or the output of frozen layers. No gradient "
         "will ever reach such a tensor, so torch refuses the hook.",
         "Hook a tensor that is part of the graph (an activation computed from trainable parameters), or make the "
         "input require a gradient first (x.requires_grad_(True)) if the gradient with respect to it is what you "
         "want; guard a hook inside forward with `if t.requires_grad:` so evaluation under no_grad still runs. A "
         "restart fails the same way.", retry=False),
    # torch/csrc/autograd/python_hook.cpp, check_single_result: "hook 'NAME' has changed the size of value".
    _sig("grad-hook-changed-size", r"hook '[^'\n]{1,200}' has changed the size of value",
         "A gradient hook (Tensor.register_hook, or a module backward hook) returned a tensor of another shape than "
         "the gradient it was given: a hook may replace a gradient only with one of the same shape (a reduction such "
         "as grad.mean(0) or grad.sum(), or a reshape, in the hook changes it).",
         "Return a tensor of grad's own shape (e.g. grad.clamp(-c, c), or a per-sample scale broadcast back: "
         "grad * scale.view(-1, 1)); compute the statistics you want to log inside the hook but return None (or the "
         "gradient) when the hook only inspects. A restart fails the same way.", retry=False),
    # Same check: "hook 'NAME' has changed the type of value (was torch.FloatTensor got CPUBFloat16Type)".
    _sig("grad-hook-changed-dtype", r"hook '[^'\n]{1,200}' has changed the type of value",
         "A gradient hook (Tensor.register_hook, or a module backward hook) returned a tensor of another dtype (or "
         "device) than the gradient it was given, e.g. a cast to bfloat16/float16 to save memory: autograd requires "
         "a hook's result to match the gradient's type, which is the tensor's own dtype.",
         "Return the gradient in its own dtype (cast back with .to(grad.dtype) if the hook computes in another); to "
         "keep gradients in lower precision use mixed precision (torch.autocast, DeepSpeed's bf16) rather than a "
         "hook. A restart fails the same way.", retry=False),
    # torch/utils/hooks.py, BackwardHook._pack_with_none / setup_input_hook: "Backward hook returned an invalid number
    # of grad_input, got 1, but expected 2" (register_full_backward_hook's result, one per module input).
    _sig("module-backward-hook-grad-count",
         r"(?:Backward|Backward pre) hook returned an invalid number of grad_(?:input|output), got \d+, but expected \d+",
         "A module's full backward hook (register_full_backward_hook / register_full_backward_pre_hook) returned a "
         "tuple of the wrong length: a backward hook that returns something must return one gradient (or None) for "
         "each of the module's tensor inputs (grad_input), or for each output for a pre-hook (grad_output).",
         "Return a tuple as long as the grad_input the hook was given, with None for the gradients it leaves "
         "unchanged (e.g. `return (g0.clamp(-c, c),) + tuple(grad_input[1:])`), or return None from a hook that "
         "only inspects. A restart fails the same way.", retry=False),
    # torch/csrc/autograd/variable.cpp, handle_view_on_rebase: "Output 0 of BackwardHookFunctionBackward is a view and
    # is being modified inplace. This view was created inside a custom Function ..." (torch/utils/hooks.py wraps a
    # hooked module's inputs and outputs in BackwardHookFunction; an in-place op on them is refused).
    _sig("module-backward-hook-inplace",
         r"Output \d+ of BackwardHookFunction(?:Backward)? is a view and is being modified inplace",
         "A module with a full backward hook (register_full_backward_hook, often added to every submodule for "
         "gradient logging) has its inputs or outputs modified in place: torch wraps a hooked module's inputs and "
         "outputs in BackwardHookFunction, and an in-place operation on them (nn.ReLU(inplace=True), a hooked "
         "in-place activation itself, `x += ...` after the module) is refused.",
         "Do not put full backward hooks on in-place modules (skip nn.ReLU/LeakyReLU/... with inplace=True when "
         "registering) and build the activations with inplace=False, or clone the hooked module's output before an "
         "in-place operation; to log gradients, a Tensor.register_hook on the activation or reading p.grad after "
         "backward avoids the wrapping. A restart fails the same way.", retry=False),
    # torch/csrc/autograd/python_engine.cpp: "The differentiated Tensor at index 0 appears to not have been used in
    # the graph. Set allow_unused=True if this is the desired behavior." (older torch: "One of the differentiated
    # Tensors appears to not have been used in the graph").
    _sig("autograd-grad-input-unused",
         r"(?:One of the differentiated Tensors|The differentiated Tensor at index \d+) appears to not have been used "
         r"in the graph",
         "torch.autograd.grad was asked for the gradient with respect to a tensor the outputs do not depend on: it "
         "is not in the outputs' graph, usually because it was detached (or copied, or replaced by a normalised or "
         "moved copy) before the model used it, or because the model read another tensor than the one passed as "
         "inputs.",
         "Pass torch.autograd.grad the very tensor the model consumed (set requires_grad on it and compute the "
         "outputs from it, without .detach(), .data or a no_grad block in between); if some inputs may really be "
         "unused, pass allow_unused=True (materialize_grads=True for zeros) and handle the None. A restart fails "
         "the same way.", retry=False),
    # torch/_tensor.py, Tensor.register_post_accumulate_grad_hook: "post accumulate grad hooks cannot be registered on
    # non-leaf tensors" (the hook runs after AccumulateGrad, which only leaves have).
    _sig("post-accumulate-hook-nonleaf", r"post accumulate grad hooks cannot be registered on non-leaf tensors",
         "The script called register_post_accumulate_grad_hook (e.g. for an optimizer step fused into the backward) "
         "on a tensor that is not a leaf: only leaves (parameters) accumulate a .grad. A module's attribute can be a "
         "computed tensor: under torch.nn.utils.parametrize (weight_norm, spectral_norm, orthogonal...) mod.weight "
         "is recomputed from mod.parametrizations.weight.original* at every access; a p.to(...) / p * 1 copy is one "
         "too.",
         "Register the hook on the real parameters, i.e. iterate model.parameters() (for a parametrized layer that "
         "gives parametrizations.weight.original0 / original1) rather than reading mod.weight, and build the "
         "per-parameter optimizers over those same tensors. A restart fails the same way.", retry=False),
)

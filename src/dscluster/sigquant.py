"""Failure signatures of quantization and pruning in a training script, from round 212 of issue 45 (live: broken
users' scripts run for real on torch 2.13 under DDP, gloo): torch.ao.quantization's eager mode (a float tensor given to
a converted model's quantized kernels, a quantized tensor given to a float operator, prepare_qat on a model in eval
mode, fuse_modules on a model in training mode, an int8 model's state_dict loaded into the float model) and
torch.nn.utils.prune (prune.remove of a parameter never pruned, a pruned model's state_dict loaded into a plain one).
Each pattern is the wording of the component that prints it (torch's dispatcher, torch/ao/quantization/quantize.py and
fuser_method_mappings.py, torch/nn/utils/prune.py, nn.Module.load_state_dict), never one log's. sigrounds.py places
this table after the other round tables, before the exception messages' (sigmessages.py, whose ckpt-model-mismatch
reads every load_state_dict report)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# nn.Module.load_state_dict's report (torch/nn/modules/module.py): "\tMissing key(s) in state_dict: ..." then
# "\tUnexpected key(s) in state_dict: ...", each on its own line, each key quoted: the unexpected keys before the one
# read are skipped a whole key at a time (linear on a line of them).
_UNEXPECTED = r"Unexpected key\(s\) in state_dict: (?:\"[\w.]{1,200}\", ){0,500}?"

QUANT_SIGNATURES: tuple[Signature, ...] = (
    # torch's dispatcher: a quantized operator (quantized::linear, quantized::conv2d.new, quantized::add, ...) called
    # with a float tensor, whose dispatch key is the plain CPU/CUDA one: the converted model's input was never
    # quantized.
    _sig("quant-float-into-quantized-op",
         r"Could not run 'quantized::\w+(?:\.\w+)?' with arguments from the '(?:CPU|CUDA|XPU|MPS)' backend",
         "A float tensor reached a quantized operator: after torch.ao.quantization's convert (or quantize / "
         "quantize_qat), the model's layers are int8 modules whose kernels (quantized::linear, quantized::conv2d...) "
         "take quantized tensors only, and eager-mode quantization quantizes activations only where a QuantStub "
         "stands. A model with no QuantStub at its input (or a float branch feeding a quantized layer after a "
         "DeQuantStub) hands the layer a float tensor.",
         "Put a torch.ao.quantization.QuantStub at the start of forward (self.quant = QuantStub(); x = self.quant(x)) "
         "and a DeQuantStub before the output and before any float-only part, then prepare, calibrate and convert "
         "again (or quantize the input yourself with torch.quantize_per_tensor and the scale of the first observer); "
         "or quantize without editing the model with FX / pt2e (prepare_fx), which inserts them. A restart fails the "
         "same way.", retry=False),
    # torch's dispatcher: an aten operator with no kernel for quantized tensors (aten::add.out for `a + b`,
    # aten::mul.out, aten::cat on some releases, a loss's ops): the QuantizedCPU / QuantizedCUDA dispatch key.
    _sig("quantized-tensor-float-op",
         r"Could not run 'aten::\w+(?:\.\w+)?' with arguments from the 'Quantized(?:CPU|CUDA|Meta|XPU)' backend",
         "A quantized tensor was given to a float operator that has no quantized kernel: in a model converted by "
         "torch.ao.quantization, the activations between the QuantStub and the DeQuantStub are quantized tensors, "
         "and an arithmetic written with Python operators in forward (a residual `x + y`, a `*` scaling, torch.add / "
         "torch.mul) or a float function (a loss, softmax on some releases) cannot take them.",
         "Write such arithmetic through a module that convert swaps for its quantized form: self.skip_add = "
         "torch.ao.nn.quantized.FloatFunctional() in __init__ and self.skip_add.add(a, b) (mul, cat, add_relu the "
         "same) in forward; or put a DeQuantStub before the float part (and a QuantStub after it). Then prepare, "
         "calibrate and convert again. A restart fails the same way.", retry=False),
    # torch/ao/quantization/quantize.py, prepare_qat: `assert model.training, "prepare_qat only works on models in
    # training mode"`.
    _sig("qat-prepare-eval-mode", r"prepare_qat only works on models? in training mode",
         "torch.ao.quantization.prepare_qat was called on a model in eval mode: quantization-aware training inserts "
         "fake-quant modules and observers that learn while the model trains, so prepare_qat refuses a model after "
         "model.eval() (an evaluation of the float model before QAT, or a model loaded and evaluated first).",
         "Call model.train() right before prepare_qat (and fuse with fuse_modules_qat on the model in training mode); "
         "for post-training quantization of an eval model use prepare (not prepare_qat) with a qconfig from "
         "get_default_qconfig. A restart fails the same way.", retry=False),
    # torch/ao/quantization/fuser_method_mappings.py, fuse_conv_bn / fuse_conv_bn_relu / fuse_linear_bn:
    # `assert conv.training == bn.training, "Conv and BN both must be in the same mode (train or eval)."`, then for
    # training mode in older releases "Fusion only for eval!" (torch 2.x: fuse_modules in training mode with a BN).
    _sig("quant-fuse-train-mode",
         r"AssertionError: Fusion only for eval!|Conv and BN both must be in the same mode \(train or eval\)",
         "torch.ao.quantization.fuse_modules was called on a model in training mode with a BatchNorm to fuse: "
         "fuse_modules folds the BatchNorm's running statistics into the convolution's (or linear's) weights, which "
         "is right only for an eval model; a model to be trained with quantization-aware training keeps its "
         "BatchNorm as a module of the fused block. (A model with some modules in train and some in eval mode is "
         "refused the same way.)",
         "For QAT, fuse with torch.ao.quantization.fuse_modules_qat on the model in training mode, then prepare_qat; "
         "for post-training quantization call model.eval() before fuse_modules and prepare. A restart fails the "
         "same way.", retry=False),
    # torch/nn/utils/prune.py, remove: `raise ValueError(f"Parameter '{name}' of module {module} has to be pruned
    # before pruning can be removed")` where the module has no forward pre-hook of a pruning method for that name.
    _sig("prune-remove-unpruned",
         r"Parameter '\w+' of module [^\n]{0,500}? has to be pruned before pruning can be removed",
         "torch.nn.utils.prune.remove was called for a parameter that was never pruned (or already removed): remove "
         "makes a pruning permanent by folding the mask into the parameter and deleting weight_orig / weight_mask and "
         "the forward pre-hook, so it takes only the (module, name) pairs a pruning method was applied to; a loop "
         "removing every parameter of each layer (bias included, or a layer the pruning left out) reaches one that "
         "has none.",
         "Remove exactly the pairs that were pruned (keep the list given to prune.global_unstructured / "
         "l1_unstructured and loop over it), or test first with prune.is_pruned(module) / hasattr(module, name + "
         "'_mask'). A restart fails the same way.", retry=False),
    # nn.Module.load_state_dict's report with a pruned parameter's keys (`<name>_orig`, `<name>_mask`, prune.py's
    # BasePruningMethod.apply) unexpected: a checkpoint saved before prune.remove, loaded into a plain model. A module's
    # `_orig` parameters come last of its parameters and its `_mask` buffers right after them, so an `_orig` key is
    # followed by another `_orig` or a `_mask` one.
    _sig("prune-state-dict-keys", _UNEXPECTED + r"\"[\w.]{0,200}?_orig\", \"[\w.]{0,200}?_(?:orig|mask)\"",
         "The checkpoint was saved from a pruned model whose pruning was never made permanent: torch.nn.utils.prune "
         "replaces each pruned parameter (weight) with weight_orig (the parameter) and weight_mask (a buffer) and "
         "recomputes weight in a forward pre-hook, so the state_dict holds weight_orig / weight_mask and no weight. "
         "A plain model of the same class expects weight.",
         "Before saving, make the pruning permanent: prune.remove(module, 'weight') for each pruned pair (the "
         "state_dict then holds the masked weight); for a checkpoint already saved, fold it yourself: sd[k] = "
         "sd.pop(k + '_orig') * sd.pop(k + '_mask') for each pruned key; or apply the same pruning to the model "
         "before load_state_dict (prune.identity(module, 'weight') creates the two names). A restart fails the same "
         "way.", retry=False),
    # nn.Module.load_state_dict's report with a converted int8 module's keys unexpected (torch/ao/nn/quantized/
    # modules/linear.py: `<prefix>_packed_params._packed_params`, `<prefix>_packed_params.dtype`, beside `scale` and
    # `zero_point`): an int8 state_dict loaded into the float model.
    _sig("quant-int8-state-dict-into-float", _UNEXPECTED + r"\"[\w.]{0,200}?_packed_params\.(?:_packed_params|dtype)\"",
         "An int8 state_dict (saved from a model converted by torch.ao.quantization) was loaded into the float "
         "model: a converted Linear keeps its int8 weight and bias packed under _packed_params._packed_params, "
         "with scale and zero_point, and has no weight / bias, so the float model finds none of its weights and "
         "none of the int8 names.",
         "Build the same quantized model first, then load: the float model with the same qconfig, fuse, prepare "
         "(calibrating is not needed) and convert, then load_state_dict the int8 file into it; or save the whole "
         "scripted model (torch.jit.save(torch.jit.script(qmodel))) and torch.jit.load it; or save the float "
         "(or QAT) model's state_dict and quantize after loading. A restart fails the same way.", retry=False),
)

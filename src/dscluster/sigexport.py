"""Failure signatures of exporting and saving a trained model at the end of a run, from round 203 of issue 45 (live:
broken users' scripts run for real on torch 2.13, transformers 5.23 and safetensors under DDP): torch.save given a
folder, TorchScript (torch.jit.script / torch.jit.trace) of the DDP wrapper, of a model returning a dict or a
transformers ModelOutput, or of a forward whose optional tensor argument is not annotated, a state_dict saved from a
model left on the meta device, and non-contiguous views given to safetensors. Each pattern is the wording of the
component that prints it (caffe2's inline_container.cc, torch/jit's frontend, tracer and ScriptModule.save,
nn.Module.load_state_dict's per-parameter message, safetensors/torch.py), and the frames where a message is not its own,
never one log's. sigrounds.py places this table just before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

EXPORT_SIGNATURES: tuple[Signature, ...] = (
    # torch.save's zip writer (caffe2/serialize/inline_container.cc, PyTorchStreamWriter's constructor): "[enforce fail
    # at inline_container.cc:N] . open file failed with strerror: Is a directory". Only the writer opens a file there;
    # torch.load of a directory fails in serialization.py's open() instead (torch-load-directory).
    _sig("torch-save-directory",
         r"inline_container\.cc:\d+\] \. open file failed with strerror: (?:Is a directory|EISDIR)",
         "torch.save was given a directory where it needs a file path: the path names an existing folder (the export "
         "or output directory itself, often just created with os.makedirs), and torch's zip writer cannot open a "
         "folder as a file.",
         "Name a file inside the folder: torch.save(model.state_dict(), os.path.join(export_dir, \"model.pt\")) (or "
         "Path(export_dir) / \"model.pt\"); for a Hugging Face model use save_pretrained(export_dir), which writes "
         "its own files into the folder. A restart fails the same way.", retry=False),
    # torch/jit/frontend.py's NotSupportedError for *args/**kwargs ("Compiled functions can't take variable number of
    # arguments or use keyword-only arguments with defaults"), pointing at DistributedDataParallel's (or
    # DataParallel's) own `def forward(self, *inputs, **kwargs)` in torch/nn/parallel: the wrapper was scripted.
    _sig("jit-script-ddp-wrapper",
         r"Compiled functions can't take variable number of arguments or use keyword-only arguments with defaults:\n"
         r"[^\n]*?nn[/\\]parallel[/\\]"
         r"(?:distributed|data_parallel)\.py\", line \d+\n[^\n]*?def forward\(self, \*inputs, \*\*kwargs\)",
         "torch.jit.script was given the DistributedDataParallel (or DataParallel) wrapper the model was trained in: "
         "TorchScript compiles the wrapper's own forward(*inputs, **kwargs), and it cannot compile variable "
         "arguments. The wrapper is for training only; it is never what gets exported.",
         "Script (or trace) the model inside the wrapper, on one rank: torch.jit.script(model.module) under "
         "`if rank == 0:` (accelerator.unwrap_model(model) with accelerate, engine.module with DeepSpeed), then "
         "barrier. A restart fails the same way.", retry=False),
    # torch/jit/_trace.py (the tracer's strict check, torch/csrc/jit/frontend/tracer.cpp): "Encountering a dict (or
    # list) at the output of the tracer might cause the trace to be incorrect ... pass strict=False to trace()".
    _sig("jit-trace-container-output", r"Encountering a (?:dict|list) at the output of the tracer",
         "torch.jit.trace was given a model whose forward returns a dict (or a list): with trace's default "
         "strict=True the tracer refuses a mutable container as output, since a trace cannot follow its structure "
         "changing with the inputs.",
         "Return a tuple (or a NamedTuple) from forward, or wrap the model for export in a module that returns "
         "tuple(out.values()) in a fixed order; if the keys never change, torch.jit.trace(model, example, "
         "strict=False) accepts the dict. A restart fails the same way.", retry=False),
    # torch/jit/_trace.py's output typing of a transformers model (torch/csrc/jit/python/pybind_utils.h): "Tracer
    # cannot infer type of CausalLMOutputWithCrossAttentions(loss=None, logits=tensor(...". transformers' ModelOutput
    # classes all end in Output (BaseModelOutputWithPast, SequenceClassifierOutput, ...).
    _sig("jit-trace-hf-model-output", r"Tracer cannot infer type of \w*Output\w*\(",
         "torch.jit.trace was given a transformers model that returns a ModelOutput (its dataclass of logits, past "
         "key values, ...), which the tracer cannot type: transformers models return tuples for tracing only when "
         "built with torchscript=True (or called with return_dict=False).",
         "Build the model for tracing: from_pretrained(..., torchscript=True) or config.torchscript = True before "
         "creating it (config.return_dict = False works too), then trace it on one rank (model.module under DDP); or "
         "export with torch.export / torch.onnx.export, which take transformers models as they are. A restart fails "
         "the same way.", retry=False),
    # torch/jit/_script.py's RecursiveScriptModule.save (`self._c.save(str(f), **kwargs)`) meeting an undefined tensor
    # in the module's graph: a forward argument written `x=None` without Optional[Tensor] is typed Tensor with an
    # undefined default, which torch 2.13 scripts and then cannot serialise ("strides() called on an undefined Tensor").
    _sig("jit-save-undefined-tensor",
         r"_script\.py\", line \d+, in save\n(?:[^\n]*\n){0,4}?[^\n]*?RuntimeError: strides\(\) called on an "
         r"undefined Tensor",
         "The scripted module could not be saved because its graph holds an undefined tensor: most often a forward "
         "argument with a default of None (mask=None, attention_mask=None) and no type annotation, which TorchScript "
         "types as Tensor with an undefined default value instead of Optional[Tensor].",
         "Annotate optional tensor arguments: def forward(self, x, mask: Optional[torch.Tensor] = None) (from "
         "typing import Optional), keep the `if mask is not None:` test, script again and save; or export with "
         "torch.export instead. A restart fails the same way.", retry=False),
    # nn.Module.load_state_dict's per-parameter message (torch/nn/modules/module.py _load_from_state_dict) with the
    # meta device's copy error: the SOURCE, the checkpoint's tensor, has no data (a meta parameter of the model being
    # loaded into only warns, "copying from a non-meta parameter in the checkpoint to a meta parameter ... is a no-op").
    # Before ckpt-model-mismatch (the first line) and meta-tensor (a model's own meta parameters moved or partitioned).
    _sig("meta-state-dict-saved",
         then(r"While copying the parameter named \"", r"an exception occurred : \('Cannot copy out of meta tensor"),
         "The checkpoint being loaded holds meta tensors (shapes without data): it was saved from a model on the meta "
         "device, such as one built under torch.device(\"meta\") or init_empty_weights for export, whose load_state_dict "
         "of the trained weights without assign=True did nothing (torch only warns: copying to a meta parameter is a "
         "no-op), so its state_dict saved no weights.",
         "Save the trained weights from the model that holds them (model.module.state_dict() under DDP, on rank 0); "
         "if you build the export model on the meta device, load into it with load_state_dict(sd, assign=True) (or "
         "to_empty(device=\"cpu\") first), check that no parameter is_meta, then save again. The saved file has no "
         "weights: a restart fails the same way.", retry=False),
    # safetensors/torch.py's _flatten / _tobytes: "You are trying to save a non contiguous tensor: `NAME` which is not
    # allowed. It either means you are trying to save tensors which are reference of each other ... or use
    # `tensor.contiguous()`".
    _sig("safetensors-non-contiguous", r"You are trying to save a non contiguous tensor",
         "safetensors' save_file was given a tensor that is a non-contiguous view: a transposed weight (w.t(), "
         "w.T, permute), a slice along an inner dimension, or a slice of a fused tensor (qkv split with chunk), which "
         "safetensors refuses to write (it stores only dense contiguous buffers).",
         "Make each such tensor contiguous before saving: {k: v.contiguous() for k, v in sd.items()} (or "
         "w.t().contiguous() where you transpose); for a model whose tensors share memory use "
         "safetensors.torch.save_model(model, path). A restart fails the same way.", retry=False),
)

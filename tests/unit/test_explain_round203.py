"""Round 203's rules (issue 45, live: exporting and saving a trained model at the end of a distributed run): torch.save
given a folder (torch-save-directory), torch.jit.script of the DDP wrapper (jit-script-ddp-wrapper), torch.jit.trace of
a model returning a dict (jit-trace-container-output) or a transformers ModelOutput (jit-trace-hf-model-output), a
scripted forward's unannotated `mask=None` failing ScriptModule.save (jit-save-undefined-tensor), a state_dict saved
from a model left on the meta device (meta-state-dict-saved) and transposed views given to safetensors
(safetensors-non-contiguous). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("torch-save-directory", "jit-script-ddp-wrapper", "jit-trace-container-output", "jit-trace-hf-model-output",
       "jit-save-undefined-tensor", "meta-state-dict-saved", "safetensors-non-contiguous")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-export-torch-save-into-directory", "torch-save-directory"),
    ("live-export-jit-script-ddp-wrapper", "jit-script-ddp-wrapper"),
    ("live-export-jit-trace-dict-output", "jit-trace-container-output"),
    ("live-export-jit-script-optional-arg", "jit-save-undefined-tensor"),
    ("live-export-onnx-no-onnxscript", "module-not-found"),
    ("live-export-meta-model-state-dict", "meta-state-dict-saved"),
    ("live-export-hf-save-pretrained-ddp", "ddp-wrapped-attribute"),
    ("live-export-jit-trace-hf-output", "jit-trace-hf-model-output"),
    ("live-export-safetensors-non-contiguous", "safetensors-non-contiguous"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "export.py", line 40, in <module>\n    main()\n'
_TORCH = "/usr/local/lib/python3.10/dist-packages/torch"


@pytest.mark.parametrize("text, name", [
    # an older torch's line number in the writer
    (_TB + f'  File "{_TORCH}/serialization.py", line 652, in _open_zipfile_writer\n'
     "    return container(name_or_buffer)\n"
     "RuntimeError: [enforce fail at inline_container.cc:603] . open file failed with strerror: Is a directory\n",
     "torch-save-directory"),
    # nn.DataParallel scripted
    (_TB + "torch.jit.frontend.NotSupportedError: Compiled functions can't take variable number of arguments or use "
     "keyword-only arguments with defaults:\n"
     f'  File "{_TORCH}/nn/parallel/data_parallel.py", line 171\n'
     "    def forward(self, *inputs, **kwargs):\n", "jit-script-ddp-wrapper"),
    # a list output
    (_TB + "RuntimeError: Encountering a list at the output of the tracer might cause the trace to be incorrect, this "
     "is only valid if the container structure does not change based on the module's inputs.\n",
     "jit-trace-container-output"),
    # a BERT classifier traced
    (_TB + "RuntimeError: Tracer cannot infer type of SequenceClassifierOutput(loss=None, logits=tensor([[0.1, 0.2]]), "
     "hidden_states=None, attentions=None)\n", "jit-trace-hf-model-output"),
    # the load in another process, a model's buffer and parameter both from meta
    ("[rank0]: RuntimeError: Error(s) in loading state_dict for Net:\n"
     "[rank0]: \tWhile copying the parameter named \"fc.weight\", whose dimensions in the model are torch.Size([2, 4]) "
     "and whose dimensions in the checkpoint are torch.Size([2, 4]), an exception occurred : ('Cannot copy out of "
     "meta tensor; no data!',).\n", "meta-state-dict-saved"),
    ("[rank0]: ValueError: You are trying to save a non contiguous tensor: `q_proj.weight` which is not allowed.\n",
     "safetensors-non-contiguous"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # torch.load of a directory: the reader's open(), not torch.save's writer
    (_TB + f'  File "{_TORCH}/serialization.py", line 425, in __init__\n    super().__init__(open(name, mode))\n'
     "IsADirectoryError: [Errno 21] Is a directory: 'checkpoints/global_step10'\n", "torch-save-directory"),
    # the user's own forward with *args scripted, not the DDP wrapper
    (_TB + "torch.jit.frontend.NotSupportedError: Compiled functions can't take variable number of arguments or use "
     "keyword-only arguments with defaults:\n"
     '  File "model.py", line 22\n    def forward(self, x, *extra):\n', "jit-script-ddp-wrapper"),
    # the user's own batch object from a traced forward
    (_TB + "RuntimeError: Tracer cannot infer type of <__main__.Batch object at 0x7f1c2c0>\n",
     "jit-trace-hf-model-output"),
    # a model's own meta parameters moved to the GPU (meta-tensor's, not a saved meta checkpoint)
    (_TB + "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
     "instead of torch.nn.Module.to() when moving module from meta to a different device.\n",
     "meta-state-dict-saved"),
    # tied embeddings given to save_file: shared tensors, not non-contiguous ones
    (_TB + "RuntimeError: \n            Some tensors share memory, this will lead to duplicate memory on disk and "
     "potential differences when loading them again: [{'lm_head.weight', 'transformer.wte.weight'}].\n",
     "safetensors-non-contiguous"),
    # an undefined tensor in a C++ op, outside ScriptModule.save
    (_TB + '  File "train.py", line 80, in step\n    out = op(x)\n'
     "RuntimeError: strides() called on an undefined Tensor\n", "jit-save-undefined-tensor"),
])
def test_near_misses(text, name):
    assert sig(text) != name

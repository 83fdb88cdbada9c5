"""Round 180's rules (issue 45, live: logging, monitoring and profiling integrations): transformers' reporting
callbacks refusing to start without their tracker's package (tracker-not-installed) and its refusal of a report_to
name it does not know (report-to-unknown); a tensor of many elements logged as a scalar or turned into a number with
.item() (scalar-of-many-elements); a TensorBoard image of a shape other than its dataformats (tb-image-shape);
Tensor.numpy on a tensor that requires grad (numpy-requires-grad); a torch.profiler trace saved twice (profiler-trace-saved-twice); and
torch.cuda.memory_summary in a process without CUDA initialized (cuda-memory-summary-uninitialized). Second wordings
(other versions', callers' or values' words than the live cases they were written from) and near misses, other
components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("tracker-not-installed", "report-to-unknown", "scalar-of-many-elements", "tb-image-shape", "numpy-requires-grad",
       "profiler-trace-saved-twice", "cuda-memory-summary-uninitialized")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "name"), [
    # MLflowCallback (transformers/integrations/integration_utils.py), report_to="mlflow" without mlflow
    ('  File "/opt/conda/lib/python3.10/site-packages/transformers/integrations/integration_utils.py", line 1042, in '
     "__init__\n"
     '    raise RuntimeError("MLflowCallback requires mlflow to be installed. Run `pip install mlflow`.")\n'
     "RuntimeError: MLflowCallback requires mlflow to be installed. Run `pip install mlflow`.\n", "tracker-not-installed"),
    # CometCallback's versioned wording, with a rank prefix
    ("[rank0]: RuntimeError: CometCallback requires comet-ml>=3.43.2 to be installed. Run `pip install "
     "comet-ml>=3.43.2`.\n", "tracker-not-installed"),
    # transformers 4.3x's list (integrations.py), before trackio/swanlab/kubeflow were added
    ("ValueError: tensorbord is not supported, only azure_ml, comet_ml, mlflow, neptune, tensorboard, wandb, "
     "codecarbon, clearml, dagshub, flyte, dvclive are supported.\n", "report-to-unknown"),
    # tensorboardX and torch before 2.1: the scalar's assert
    ('  File "/usr/local/lib/python3.8/dist-packages/tensorboardX/summary.py", line 171, in scalar\n'
     "    assert(scalar.squeeze().ndim == 0), 'scalar should be 0D'\n"
     "AssertionError: scalar should be 0D\n", "scalar-of-many-elements"),
    # .item() on a per-token loss, another size
    ("    running_loss += loss.item()\n"
     "RuntimeError: a Tensor with 512 elements cannot be converted to Scalar\n", "scalar-of-many-elements"),
    # an HWC image given with the default dataformats, tensorboardX's wording
    ('  File "/usr/lib/python3/dist-packages/tensorboardX/utils.py", line 98, in convert_to_HWC\n'
     "AssertionError: size of input tensor and input format are different. tensor shape: (28, 28), input_format: "
     "CHW\n", "tb-image-shape"),
    # torch before 1.0's Variable wording
    ("RuntimeError: Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead.\n",
     "numpy-requires-grad"),
    # older torch's ProfilerResult::save (no full stop)
    ('  File "/usr/lib/python3.9/site-packages/torch/profiler/profiler.py", line 141, in export_chrome_trace\n'
     "    return self.profiler.export_chrome_trace(path)\n"
     "RuntimeError: Trace is already saved\n", "profiler-trace-saved-twice"),
    # torch 1.x's memory_summary (no carets), another line number
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 88, in <module>\n'
     "    logger.info(torch.cuda.memory_summary())\n"
     '  File "/opt/conda/lib/python3.8/site-packages/torch/cuda/memory.py", line 403, in memory_summary\n'
     '    current = stats[prefix + "current"]\n'
     "KeyError: 'allocated_bytes.all.current'\n", "cuda-memory-summary-uninitialized"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # transformers' other "requires ... to be installed" text: a FlyteCallback option, not a report_to tracker
    ("ImportError: Syncing log history requires both flytekitplugins-deck-standard and pandas to be installed. Run "
     "`pip install flytekitplugins-deck-standard pandas`.\n", "tracker-not-installed"),
    # a tokenizer's missing backend (transformers' requires_backends)
    ("ImportError: \nT5Tokenizer requires the SentencePiece library but it was not found in your environment.\n",
     "tracker-not-installed"),
    # an image processor's "is not supported, only ... are supported" (not report_to)
    ("ValueError: Got type <class 'str'> which is not supported, only `PIL.Image.Image`, `np.ndarray` and "
     "`torch.Tensor` are supported.\n", "report-to-unknown"),
    # torch.tensor of a list of many-element tensors: Tensor.__float__'s words, not a logged scalar
    ("    labels = torch.tensor(batch_labels)\n"
     "ValueError: only one element tensors can be converted to Python scalars\n", "scalar-of-many-elements"),
    # .item() on an empty tensor: nothing to read, not too many elements
    ("RuntimeError: a Tensor with 0 elements cannot be converted to Scalar\n", "scalar-of-many-elements"),
    # the truth value of a many-element tensor
    ("RuntimeError: Boolean value of Tensor with more than one value is ambiguous\n", "scalar-of-many-elements"),
    # convert_to_HWC's other refusal: a dataformats string that repeats a letter
    ("AssertionError: You can not use the same dimension shordhand twice.         input_format: CHH\n",
     "tb-image-shape"),
    # Tensor.numpy's other refusals: a CUDA tensor, a conjugate view
    ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.\n", "numpy-requires-grad"),
    ("RuntimeError: Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() "
     "instead.\n", "numpy-requires-grad"),
    # Kineto's own lines when the trace's directory is missing (the run goes on)
    ("ERROR:2026-12-07 10:05:33 2644:2644 output_json.cpp:466] Failed to open 'traces/rank0.json' : No such file or "
     "directory\n", "profiler-trace-saved-twice"),
    # another program's "already saved"
    ("HttpException: This trace is already saved.\n", "profiler-trace-saved-twice"),
    # the user's own memory_summary helper failing on its dict, not torch.cuda's
    ('  File "utils/mem.py", line 30, in memory_summary\n'
     "    return stats['peak_rss']\n"
     "KeyError: 'peak_rss'\n", "cuda-memory-summary-uninitialized"),
])
def test_near_misses(text, name):
    assert sig(text) != name

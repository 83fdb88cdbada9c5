"""Round 129's rules (issue 45), from LLM pretraining codebases run on several GPUs (lit-gpt, nanotron, fairseq):
FSDP's post-backward hook refused for parameters without autograd history, the FSDP-wrapped model having run under
torch.inference_mode() (torch/distributed/fsdp/_runtime_utils.py's _p_assert, older releases' fully_sharded_data_parallel
the same words; pytorch/pytorch#113203), and nanotron's config check wanting a data stage that starts at training step
1 (src/nanotron/config/config.py, Config.__post_init__; `assert all` before huggingface/nanotron#120, `assert any`
after): second wordings from other threads and versions, and near misses that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("fsdp-inference-mode", "nanotron-data-stages")


@pytest.mark.parametrize("text,expected", [
    # pytorch/pytorch#113203 (the lit-gpt maintainer's repro: FSDP(model) run under torch.inference_mode(), then
    # trained): what each of the two ranks printed before the traceback, the message alone as _p_assert prints it
    ("Validating ...\nValidating ...\nTraining ...\nThe `grad_fn` is needed to access the `AccumulateGrad` and register "
     "the post-backward hook\nTraining ...\nThe `grad_fn` is needed to access the `AccumulateGrad` and register the "
     "post-backward hook\n", "fsdp-inference-mode"),
    # torchrun's per-rank prefix (torch 2.2+), the AssertionError of _runtime_utils.py's _p_assert after its frames
    ("[rank1]:   File \"/usr/lib/python3/site-packages/torch/distributed/fsdp/_runtime_utils.py\", line 1406, in "
     "_register_post_backward_hook\n[rank1]:     _p_assert(\n[rank1]: AssertionError: The `grad_fn` is needed to access "
     "the `AccumulateGrad` and register the post-backward hook\n", "fsdp-inference-mode"),
    # an older release's fully_sharded_data_parallel.py (p_assert in a loop over the flat handles), the same words
    ("  File \"/opt/conda/lib/python3.8/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line "
     "2921, in _register_post_backward_hooks\n    p_assert(\nAssertionError: The `grad_fn` is needed to access the "
     "`AccumulateGrad` and register the post-backward hook\n", "fsdp-inference-mode"),
    # nanotron after #120 (`assert any(`, config.py's later line), under torchrun's per-rank prefix
    ("[rank3]:   File \"/fsx/nanotron/src/nanotron/config/config.py\", line 496, in __post_init__\n[rank3]:     assert "
     "any(\n[rank3]: AssertionError: You must have a training stage starting at 1 in the config's data_stages\n",
     "nanotron-data-stages"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # autograd's own words for a loss with no graph (torch/csrc/autograd/engine: the loss-no-grad family): grad_fn named,
    # no FSDP hook
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n", "fsdp-inference-mode"),
    # an inference tensor saved for backward without FSDP (torch's inference-mode check, VariableTypeManual.cpp)
    ("RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
     "normal tensor and use it in autograd.\n", "fsdp-inference-mode"),
    # FSDP's reshard-only post-backward hooks registered under no_grad (pytorch/pytorch#105369): CPython's SystemError
    # from run_backward, not the grad_fn assert
    ("SystemError: <built-in method run_backward of torch._C._EngineBase object at 0x7f8e2c1b2d40> returned NULL "
     "without setting an error\n", "fsdp-inference-mode"),
    # nanotron's neighbouring checks in the same __post_init__ (config.py): stage names and start steps
    ("ValueError: Each stage should have unique names and not ['Stable Training Stage', 'Stable Training Stage']\n",
     "nanotron-data-stages"),
    ("ValueError: Each stage should have unique starting training step, please change the starting training step for "
     "stage Annealing Phase\n", "nanotron-data-stages"),
    ("AssertionError: Profiling steps (10) must be less than or equal to train steps (5)\n", "nanotron-data-stages"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

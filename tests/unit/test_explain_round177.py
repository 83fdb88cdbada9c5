"""Round 177's rules (issue 45, live: evaluation and metrics inside distributed training): autograd's refusal to save an
inference tensor for backward (a cache or batch made under torch.inference_mode() in an evaluation pass, reused by
training), read as inference-tensor-saved; and c10d's refusal of a collective given something that is not a tensor (a
metric accumulated with .item()), read as collective-arg-not-tensor. Second wordings (other versions' words) and near
misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("inference-tensor-saved", "collective-arg-not-tensor")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torch 1.9-2.x's wording (saved_variable.cpp), before "Please do not use ..." was added
    ("    loss.backward()\n"
     "RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
     "normal tensor and use it in autograd.\n"),
    # a Lightning run whose validation ran under inference_mode, with the rank prefix of torchrun
    ("[rank1]:     return F.linear(input, self.weight, self.bias)\n"
     "[rank1]: RuntimeError: Inference tensors cannot be saved for backward. Please do not use Tensors created in "
     "inference mode in computation tracked by autograd. To work around this, you can make a clone to get a normal "
     "tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.\n"),
])
def test_inference_tensor_saved(text):
    assert sig(text) == "inference-tensor-saved"


@pytest.mark.parametrize("text", [
    # another misuse of an inference tensor (VariableTypeUtils.h check_inplace): not saving for backward
    "RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get "
    "a normal tensor before doing inplace update.\n",
    # FSDP's post-backward hook on an inference flat parameter has its own family
    "AssertionError: The `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook\n",
])
def test_inference_tensor_near_misses(text):
    assert sig(text) != "inference-tensor-saved"


@pytest.mark.parametrize("text", [
    # older torch's _check_single_tensor (1.x): "to be of type", one line
    ("  File \"/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py\", line 226, in "
     "_check_single_tensor\n"
     "    \"to be of type torch.Tensor.\".format(param_name)\n"
     "RuntimeError: Invalid function argument. Expected parameter `tensor` to be of type torch.Tensor.\n"),
    # torch 2.x's _check_tensor_list, all_gather given a list of floats
    ("TypeError: Invalid function argument. Expected parameter `tensor_list` of type List[torch.Tensor]\n"
     "             but got <class 'list'> with elements of type [<class 'float'>, <class 'float'>].\n"),
])
def test_collective_arg_not_tensor(text):
    assert sig(text) == "collective-arg-not-tensor"


@pytest.mark.parametrize("text", [
    # all_gather_coalesced's own check on the outer list, left generic
    "ValueError: Invalid function argument: output_tensor_lists should be a list\n",
    # an argparse-style refusal with like words in another program
    "TypeError: Invalid function argument. Expected parameter `path` of type str but got int.\n",
])
def test_collective_arg_near_misses(text):
    assert sig(text) != "collective-arg-not-tensor"

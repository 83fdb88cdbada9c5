"""Round 176's rules (issue 45), from live failures of custom autograd Functions, torch.library custom ops and a
user's own C++ extension in a DDP script: a Function's backward or save_for_backward breaking autograd's contract
(autograd-function-contract), backward through a custom op with no register_autograd (custom-op-no-autograd); second
wordings (other callers' and checks' words) and near misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("autograd-function-contract", "custom-op-no-autograd")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("text", "name"), [
    # engine.cpp validate_outputs: a wrong dtype of a returned gradient
    ("RuntimeError: Function MyMatmulBackward returned an invalid gradient at index 1 - expected dtype float but "
     "got double\n", "autograd-function-contract"),
    # engine.cpp validate_outputs: the count check of a C++ Function
    ("RuntimeError: invalid number of gradients - expected 3, but got 2\n", "autograd-function-contract"),
    # python_function.cpp _save_variables, a later rank's prefix, another type
    ("[rank1]: TypeError: save_for_backward can only save variables, but argument 2 is of type int\n",
     "autograd-function-contract"),
    # a plain (non-torchrun) script, no rank prefix
    ("RuntimeError: function _FusedLayerNormBackward returned an incorrect number of gradients (expected 5, got 4)\n",
     "autograd-function-contract"),
    # torch.library's custom op, a namespaced op with an overload name
    ("RuntimeError: Trying to backward through my_ops.fused_rope.default but no autograd formula was registered. "
     "Please use register_autograd to add one.\n", "custom-op-no-autograd"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text", [
    # autograd's in-place version check is its own family
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.FloatTensor [4, 8]], which is output 0 of TanhBackward0, is at version 1; expected version 0 instead.\n",
    # a model's own shape error, not a gradient's
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x8)\n",
    # torch.library refusing to register, not a missing backward
    "RuntimeError: Cannot register autograd formula for non-functional operator mylib::foo with mutable args.\n",
    # the loss with no graph at all
    "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n",
])
def test_near_misses(text):
    assert sig(text) not in NEW

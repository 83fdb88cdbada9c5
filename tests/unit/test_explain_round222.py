"""Round 222's rules (issue 45, live: gradient hooks, inspection and manipulation in a user's training loop):
register_hook on a tensor that needs no gradient (grad-hook-no-requires-grad), a tensor hook returning another shape
(grad-hook-changed-size) or dtype (grad-hook-changed-dtype), a full backward hook returning the wrong number of
gradients (module-backward-hook-grad-count) or wrapping a module next to an in-place op (module-backward-hook-inplace),
torch.autograd.grad of an input outside the graph (autograd-grad-input-unused), a post-accumulate-grad hook on a
non-leaf (post-accumulate-hook-nonleaf) and a non-leaf's .grad read without retain_grad (nonleaf-grad-none, before
param-grad-none). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("grad-hook-no-requires-grad", "grad-hook-changed-size", "grad-hook-changed-dtype",
       "module-backward-hook-grad-count", "module-backward-hook-inplace", "autograd-grad-input-unused",
       "post-accumulate-hook-nonleaf", "nonleaf-grad-none")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-gradhook-register-hook-no-grad", "grad-hook-no-requires-grad"),
    ("live-gradhook-hook-wrong-shape", "grad-hook-changed-size"),
    ("live-gradhook-hook-wrong-dtype", "grad-hook-changed-dtype"),
    ("live-gradhook-nonleaf-retain-grad", "nonleaf-grad-none"),
    ("live-gradhook-autograd-grad-unconnected", "autograd-grad-input-unused"),
    ("live-gradhook-full-hook-inplace-relu", "module-backward-hook-inplace"),
    ("live-gradhook-grad-norm-unused-param", "param-grad-none"),
    ("live-gradhook-full-hook-wrong-count", "module-backward-hook-grad-count"),
    ("live-gradhook-zero2-grad-scale-inplace", "param-grad-none"),
    ("live-gradhook-post-accumulate-parametrized", "post-accumulate-hook-nonleaf"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_ENGINE = ('  File "/opt/torch/autograd/graph.py", line 979, in _engine_run_backward\n'
           "    return Variable._execution_engine.run_backward(\n")


@pytest.mark.parametrize("text, name", [
    # the post-accumulate hook on a tensor made under no_grad
    (_TB + "RuntimeError: cannot register a hook on a tensor that doesn't require gradient\n",
     "grad-hook-no-requires-grad"),
    # a named hook function that flattens the gradient
    (_TB + _ENGINE + "RuntimeError: hook 'flatten_grad' has changed the size of value\n", "grad-hook-changed-size"),
    # a hook returning a float16 gradient
    (_TB + _ENGINE + "RuntimeError: hook 'to_half' has changed the type of value (was torch.FloatTensor got "
                     "torch.HalfTensor)\n", "grad-hook-changed-dtype"),
    # a full backward pre-hook returning too many gradients
    (_TB + _ENGINE + "RuntimeError: Backward pre hook returned an invalid number of grad_output, got 2, but expected "
                     "1\n", "module-backward-hook-grad-count"),
    # older torch's wording of the unused input
    (_TB + "RuntimeError: One of the differentiated Tensors appears to not have been used in the graph. Set "
           "allow_unused=True if this is the desired behavior.\n", "autograd-grad-input-unused"),
    # the hooked module's output modified in place by the next one (`x += skip`)
    (_TB + "RuntimeError: Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace. This view "
           "was created inside a custom Function\n", "module-backward-hook-inplace"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a parameter's .grad None (no non-leaf warning): param-grad-none, not nonleaf-grad-none
    (_TB + "    n = p.grad.norm().item()\n        ^^^^^^^^^^^\nAttributeError: 'NoneType' object has no attribute "
           "'norm'\n", "nonleaf-grad-none"),
    # a custom autograd.Function's own view modified in place, no module hook
    (_TB + "RuntimeError: Output 0 of MyFnBackward is a view and is being modified inplace. This view was created "
           "inside a custom Function\n", "module-backward-hook-inplace"),
    # an in-place op on a leaf that requires grad, not a hook
    (_TB + "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n",
     "grad-hook-no-requires-grad"),
    # a custom Function's backward returning the wrong count, not a module hook
    (_TB + _ENGINE + "RuntimeError: function MyFnBackward returned an incorrect number of gradients (expected 2, got "
                     "1)\n", "module-backward-hook-grad-count"),
])
def test_near_misses(text, name):
    assert sig(text) != name

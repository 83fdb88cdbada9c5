"""Round 196's rules (issue 45, live: several models in one training script: a teacher, a frozen reference model, an
EMA copy, two DeepSpeed engines): an EMA or mean-teacher copy updated in place outside torch.no_grad()
(leaf-inplace-requires-grad), a teacher built without its weights whose meta outputs meet real tensors
(meta-tensor-compute), an EMA over state_dict() scaling an integer buffer in place (inplace-result-type-cast), a
student and a teacher whose output sizes differ under F.kl_div (kl-div-size-mismatch) and a second deepspeed.initialize given a config both in args and as config=
(ds-config-given-twice). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("leaf-inplace-requires-grad", "ds-config-given-twice", "meta-tensor-compute",
       "inplace-result-type-cast", "kl-div-size-mismatch")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-ema-update-outside-no-grad", "leaf-inplace-requires-grad"),
    ("live-distill-second-init-args-and-config", "ds-config-given-twice"),
    ("live-distill-teacher-empty-weights", "meta-tensor-compute"),
    ("live-ema-state-dict-int-buffer", "inplace-result-type-cast"),
    ("live-distill-teacher-classes-differ", "kl-div-size-mismatch"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_DS = "/opt/conda/lib/python3.10/site-packages/deepspeed/__init__.py"


@pytest.mark.parametrize("text, name", [
    # weights clipped in place (WGAN) without no_grad, torch 1.13 (no caret lines), ranks' prefixes
    ("[rank0]: " + _TB.replace("\n", "\n[rank0]: ", 3) + "[rank0]:     p.clamp_(-0.01, 0.01)\n"
     "[rank0]: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n",
     "leaf-inplace-requires-grad"),
    # DeepSpeed 0.9's wording, under initialize's own frame
    (_TB + f'  File "{_DS}", line 157, in initialize\n    assert config is None, "Not sure how to proceed, we were '
     'given deepspeed configs in the deepspeed arguments and deepspeed.initialize() function call"\n'
     "AssertionError: Not sure how to proceed, we were given deepspeed configs in the deepspeed arguments and "
     "deepspeed.initialize() function call\n", "ds-config-given-twice"),
    # a reference model left on the meta device meeting a CUDA tensor
    (_TB + "RuntimeError: Tensor on device meta is not on the expected device cuda:0!\n", "meta-tensor-compute"),
    # an attention mask (bool) scaled in place
    (_TB + "RuntimeError: result type Float can't be cast to the desired output type Bool\n", "inplace-result-type-cast"),
    # a language model's vocabularies differing (torch 2.1, Python 3.10: no caret lines)
    (_TB + '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py", line 2949, in kl_div\n'
     "    reduced = torch.kl_div(input, target, reduction_enum, log_target=log_target)\n"
     "RuntimeError: The size of tensor a (32000) must match the size of tensor b (32001) at non-singleton dimension 2\n",
     "kl-div-size-mismatch"),
    # a view of a leaf changed in place (weight[:, 0] = 0 outside no_grad): the same mistake, torch's other words
    (_TB + "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.\n",
     "leaf-inplace-requires-grad"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # an in-place op on a tensor autograd needs for backward: another error of in-place operations
    (_TB + "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.FloatTensor [8, 32]], which is output 0 of ReluBackward0, is at version 1; expected version 0 "
     "instead.\n", "leaf-inplace-requires-grad"),
    # both a deepscale_config and a deepspeed_config: the other "Not sure how to proceed" of initialize
    (_TB + "AssertionError: Not sure how to proceed, we were given both a deepscale_config and deepspeed_config\n",
     "ds-config-given-twice"),
    # a meta parameter copied out (Module.to / load_state_dict): meta-tensor's own words
    (_TB + "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
     "instead of torch.nn.Module.to() when moving module from meta to a different device.\n", "meta-tensor-compute"),
    # two real devices: device-mismatch's words
    (_TB + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
     "cpu!\n", "meta-tensor-compute"),
    # an integer tensor given to an op that wants floats: not an in-place cast
    (_TB + "RuntimeError: \"normal_kernel_cpu\" not implemented for 'Long'\n", "inplace-result-type-cast"),
])
def test_near_misses(text, name):
    assert sig(text) != name

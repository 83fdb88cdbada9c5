"""Round 218's rules (issue 45, live: weight tying and state_dict surgery in a user's script): a checkpoint's keys cut
at the wrong place by the script's own renaming (state-dict-keys-cut); a plain tensor (an embedding's transpose, .data)
assigned to a registered parameter to tie it is round 214's module-assign-tensor-to-parameter, whose texts name the
tying; linear-shape-mismatch now names a head tied to an embedding of another width, and state-dict-partial-strict's
fix a tied model's safetensors file. The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("state-dict-keys-cut",)
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("linear-shape-mismatch", "state-dict-partial-strict",
                                          "module-assign-tensor-to-parameter"))
    assert "embed.weight.t()" in by_name["module-assign-tensor-to-parameter"].cause
    assert "tied to an embedding" in by_name["linear-shape-mismatch"].cause
    assert "load_model" in by_name["state-dict-partial-strict"].fix


@pytest.mark.parametrize("case, name", [
    ("live-tying-head-other-shape", "linear-shape-mismatch"),
    ("live-tying-assign-transpose", "module-assign-tensor-to-parameter"),
    ("live-tying-new-embed-after-tie", "loss-target-out-of-bounds"),
    ("live-tying-strip-prefix-slice", "state-dict-keys-cut"),
    ("live-tying-grow-vocab-view-leaf", "leaf-inplace-requires-grad"),
    ("live-tying-whole-model-weights-only", "ckpt-weights-only"),
    ("live-tying-safetensors-dropped-head", "state-dict-partial-strict"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_LOAD = (_TB + '  File "/opt/torch/nn/modules/module.py", line 2638, in load_state_dict\n    raise RuntimeError(\n'
         "RuntimeError: Error(s) in loading state_dict for GPT:\n")


@pytest.mark.parametrize("text, name", [
    # a bias set from a numpy-converted tensor
    (_TB + "TypeError: cannot assign 'torch.DoubleTensor' as parameter 'bias' (torch.nn.Parameter or None "
           "expected)\n", "module-assign-tensor-to-parameter"),
    # k.replace('module', '') leaving the dot, after a key that was already right
    (_LOAD + '\tMissing key(s) in state_dict: "h.0.attn.weight". \n'
             '\tUnexpected key(s) in state_dict: "wte.weight", ".h.0.attn.weight". \n', "state-dict-keys-cut"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a buffer assigned a tensor is fine; a submodule assigned a tensor is another message
    (_TB + "TypeError: cannot assign 'torch.FloatTensor' as child module 'proj' (torch.nn.Module or None "
           "expected)\n", "module-assign-tensor-to-parameter"),
    # DDP's prefix kept: the keys are whole, no key begins with a dot
    (_LOAD + '\tMissing key(s) in state_dict: "fc.weight", "fc.bias". \n'
             '\tUnexpected key(s) in state_dict: "module.fc.weight", "module.fc.bias". \n', "state-dict-keys-cut"),
    # a dot inside a key among the missing ones only
    (_LOAD + '\tMissing key(s) in state_dict: "lm_head.weight". \n', "state-dict-keys-cut"),
])
def test_near_misses(text, name):
    assert sig(text) != name

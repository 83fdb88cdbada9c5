"""Round 61's rules (issue 45), from DeepSpeed/torchrun training threads of model and research repositories (FastChat,
OpenChat; sigtraining.py): flash attention's backward refusing a GPU other than sm80/sm90 in c10's bare TORCH_CHECK words
(`Expected is_sm80 to be true, but got false`, flash-attn 1.x and torch 2.0's SDPA flash kernel), and a flash-attn
function named as in the other major version left undefined by a guarded import (flash-attn 2.0 renamed
flash_attn_unpadded_*func to flash_attn_varlen_*func): a second wording of each, in another version's or another
caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # torch 2.0's own scaled_dot_product_attention flash kernel on an sm86 GPU (pytorch/pytorch#94883), with c10's
    # default suffix
    ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, "
     "please report an enhancement request to PyTorch.)\n", "flash-attn-arch"),
    # flash-attn 1.0.x's later check, TORCH_CHECK(is_sm80 || is_sm90) in fmha_api.cpp's mha_bwd
    ("RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be improved?  "
     "If so, please report an enhancement request to PyTorch.)\n", "flash-attn-arch"),
    # the 1.x name, aliased from flash_attn_varlen_func in a guarded import, with no flash-attn installed
    # (Yuliang-Liu/Monkey#76; the maintainers: install a flash-attn 2 wheel)
    ("    assert flash_attn_unpadded_func is not None, (\n"
     "NameError: name 'flash_attn_unpadded_func' is not defined\n", "import-name"),
    # the packed variant of the 2.x name, under a rank prefix
    ("[rank0]:     qkv_out = flash_attn_varlen_qkvpacked_func(\n"
     "[rank0]: NameError: name 'flash_attn_varlen_qkvpacked_func' is not defined\n", "import-name"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # other bare TORCH_CHECKs in c10's same words: torch.load of a damaged file (Zhanxin-Gao/CPrompt#7) and RReLU's
    # bounds (pytorch/pytorch#65980)
    ("RuntimeError: Expected hasRecord(\"version\") to be true, but got false. (Could this error message be improved? "
     "If so, please report an enhancement request to PyTorch.)\n", "flash-attn-arch"),
    ("RuntimeError: Expected from <= to to be true, but got false.  (Could this error message be improved?  If so, "
     "please report an enhancement request to PyTorch.)\n", "flash-attn-arch"),
    # flash-attn 2's own, worded check is round 14's rule; an sm90-only check (FlashAttention 3's Hopper kernels) is
    # not this one
    ("RuntimeError: Expected is_sm90 to be true, but got false.\n", "flash-attn-arch"),
    # a flash-attn name that both major versions have (jy-yuan/KIVI#20, cause not established): not the renamed API
    ("NameError: name 'flash_attn_func' is not defined\n", "import-name"),
    # a NameError of the script's own code
    ("  File \"train.py\", line 12, in <module>\n    model = varlen_func(x)\n"
     "NameError: name 'varlen_func' is not defined\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    new = [s for s in explain.SIGNATURES if "is_sm80" in s.pattern.pattern or "flash_attn_(?:varlen" in s.pattern.pattern]
    assert len(new) == 2
    for s in new:
        assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
        assert s.retry is False

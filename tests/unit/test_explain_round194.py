"""Round 194's rules (issue 45, live: building transformers models from configs and custom model classes): a dict
given to an Auto class's from_config (hf-from-config-not-config), a hidden size the heads do not divide
(hf-heads-not-divisor), FlashAttention asked for where it cannot run (hf-flash-attn-unavailable), AutoConfig.register /
AutoModel.register disagreeing with the classes (hf-auto-register-mismatch), a custom model's embedding not found
(hf-input-embeddings-not-found), from_pretrained on a class without config_class (hf-no-config-class), the user's own
model type saved and loaded through the Auto classes unregistered (hf-custom-model-unregistered), key/value heads not
dividing the query heads (hf-kv-heads-not-divisor) and a strict config field of the wrong type (hf-config-field-type).
Each on its case's log, second wordings, and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

LIVE = Path(__file__).resolve().parents[1] / "data" / "live"
CASES = {
    "live-hfcfg-from-config-dict": "hf-from-config-not-config",
    "live-hfcfg-heads-not-divisor": "hf-heads-not-divisor",
    "live-hfcfg-flash-attn-cpu": "hf-flash-attn-unavailable",
    "live-hfcfg-register-model-type": "hf-auto-register-mismatch",
    "live-hfcfg-register-config-class": "hf-auto-register-mismatch",
    "live-hfcfg-resize-custom-embeddings": "hf-input-embeddings-not-found",
    "live-hfcfg-no-config-class": "hf-no-config-class",
    "live-hfcfg-automodel-unregistered": "hf-custom-model-unregistered",
    "live-hfcfg-kv-heads-not-divisor": "hf-kv-heads-not-divisor",
    "live-hfcfg-config-field-str": "hf-config-field-type",
}


def test_new_families_are_translated_and_final():
    translated_and_final(sorted(set(CASES.values())))


@pytest.mark.parametrize("case, name", sorted(CASES.items()))
def test_each_case_log(case, name):
    assert sig((LIVE / case / "log.txt").read_text()) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_AUTO = ('  File "/usr/lib/python3/site-packages/transformers/models/auto/configuration_auto.py", line 438, in '
         'from_pretrained\n    raise ValueError(\n')
_UNKNOWN = ("ValueError: The checkpoint you are trying to load has model type `tiny_lm` but Transformers does not "
            "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
            "version of Transformers is out of date.\n")
_SDPA = ('  File "/usr/lib/python3/site-packages/transformers/integrations/sdpa_attention.py", line 193, in '
         'sdpa_attention_forward\n    attn_output = torch.nn.functional.scaled_dot_product_attention(\n'
         '                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n')


@pytest.mark.parametrize("text, name", [
    # a model name string given to from_config
    (_TB + "ValueError: Unrecognized configuration class <class 'str'> for this kind of AutoModel: AutoModel.\n",
     "hf-from-config-not-config"),
    # GPT-2's attention and LlamaConfig's own check, ranks' prefixes
    ("[rank0]: ValueError: `embed_dim` must be divisible by num_heads (got `embed_dim`: 100 and `num_heads`: 12).\n",
     "hf-heads-not-divisor"),
    (_TB + "ValueError: The hidden size (100) is not a multiple of the number of attention heads (8).\n",
     "hf-heads-not-divisor"),
    # flash-attn installed on a CPU node; 4.x's wording without it
    (_TB + "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention2 is not available on CPU. Please make sure you are on any of the supported devices\n",
     "hf-flash-attn-unavailable"),
    (_TB + "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
     "package flash_attn seems to be not installed.\n", "hf-flash-attn-unavailable"),
    (_TB + "ValueError: The config you are passing has a `model_type` attribute that is not consistent with the model "
     "type you passed (config has a and you passed b. Fix one of those so they match!\n", "hf-auto-register-mismatch"),
    (_TB + "NotImplementedError: `set_input_embeddings` not auto\u2011handled for MyNet; please override in the "
     "subclass.\n", "hf-input-embeddings-not-found"),
    # a float where an int is expected
    (_TB + "huggingface_hub.errors.StrictDataclassFieldValidationError: Validation error for field "
     "'num_attention_heads':\n    TypeError: Field 'num_attention_heads' expected int, got float (value: 4.0)\n",
     "hf-config-field-type"),
    (_TB + _SDPA + "RuntimeError: The size of tensor a (8) must match the size of tensor b (6) at non-singleton "
     "dimension 1\n", "hf-kv-heads-not-divisor"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a real config class that this Auto class does not take: another kind of model, not a non-config
    (_TB + "ValueError: Unrecognized configuration class <class 'transformers.models.bert.configuration_bert."
     "BertConfig'> for this kind of AutoModel: AutoModelForCausalLM.\n", "hf-from-config-not-config"),
    # a model too new for this transformers, loaded from the Hub with nothing saved before it: package-too-old's
    (_TB + _AUTO + _UNKNOWN, "hf-custom-model-unregistered"),
    # a model that does not support flash attention at all (not the node)
    (_TB + "ValueError: MyNet does not support Flash Attention 2 yet. Please request to add support where the model "
     "is hosted\n", "hf-flash-attn-unavailable"),
    # the same broadcast error in the model's own code, not under sdpa_attention_forward
    (_TB + '  File "model.py", line 12, in forward\n    h = h + bias\n'
     "RuntimeError: The size of tensor a (8) must match the size of tensor b (6) at non-singleton dimension 1\n",
     "hf-kv-heads-not-divisor"),
    # sdpa's mismatch on the sequence dimension (a mask of another length), not the heads
    (_TB + _SDPA + "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton "
     "dimension 3\n", "hf-kv-heads-not-divisor"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_unknown_model_type_alone_stays_package_too_old():
    assert sig(_TB + _AUTO + _UNKNOWN) == "package-too-old"

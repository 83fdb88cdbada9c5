"""Round 217's rules (issue 45, live: DeepSpeed inference and text generation from a training or serving script):
sampling at temperature 0 (gen-sampling-temperature-zero), max_length no longer than the prompts
(gen-max-length-under-prompt), num_return_sequences with greedy decoding (gen-num-return-sequences), the batch dict
given to generate() as its first argument (gen-inputs-dict-positional), transformers 5's Cache read as the legacy tuple
(hf-cache-legacy-format), one DynamicCache kept for every batch (gen-cache-reused), a generation past a model's learned
positions (gen-past-max-positions) and generate() on a ZeRO-3 model that the ranks do not run in step
(zero3-generate-unsynced). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("gen-sampling-temperature-zero", "gen-max-length-under-prompt", "gen-num-return-sequences",
       "gen-inputs-dict-positional", "hf-cache-legacy-format", "gen-cache-reused", "gen-past-max-positions",
       "zero3-generate-unsynced")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-infer-kernel-inject-cpu", "ds-op-no-cpu"),
    ("live-infer-temperature-zero", "gen-sampling-temperature-zero"),
    ("live-infer-max-length-prompt", "gen-max-length-under-prompt"),
    ("live-infer-greedy-num-return", "gen-num-return-sequences"),
    ("live-infer-batch-dict-positional", "gen-inputs-dict-positional"),
    ("live-infer-cache-subscript", "hf-cache-legacy-format"),
    ("live-infer-gpt2-past-positions", "gen-past-max-positions"),
    ("live-infer-reused-cache", "gen-cache-reused"),
    ("live-infer-zero3-rank0-generate", "zero3-generate-unsynced"),
    ("live-infer-zero3-unsynced-lengths", "zero3-generate-unsynced"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "serve.py", line 40, in <module>\n    main()\n'
_GEN = '  File "/opt/venv/lib/python3.11/site-packages/transformers/generation/utils.py", line 2842, in generate\n'
_CACHE = ('  File "/opt/venv/lib/python3.11/site-packages/transformers/cache_utils.py", line 136, in update\n'
          "    self.keys = torch.cat([self.keys, key_states], dim=-2)\n"
          "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n")


@pytest.mark.parametrize("text, name", [
    # a negative temperature
    (_TB + "ValueError: `temperature` (=-1) has to be a strictly positive float, otherwise your next token scores will "
           "be invalid.\n", "gen-sampling-temperature-zero"),
    # beam search asked for more sequences than beams
    (_TB + "ValueError: `num_return_sequences` (4) has to be smaller or equal to `num_beams` (2).\n",
     "gen-num-return-sequences"),
    # a tokenizer's BatchEncoding given positionally
    (_TB + _GEN + "    batch_size = inputs_tensor.shape[0]\n                 ^^^^^^^^^^^^^^^^^^^\n"
           "AttributeError: 'BatchEncoding' object has no attribute 'shape'\n", "gen-inputs-dict-positional"),
    # a legacy tuple handed back to a transformers 5 model
    (_TB + "AttributeError: 'tuple' object has no attribute 'get_seq_length'\n", "hf-cache-legacy-format"),
    (_TB + "TypeError: 'StaticCache' object is not subscriptable\n", "hf-cache-legacy-format"),
    # OPT's learned positions past the table during beam search
    (_TB + _GEN.replace("generate", "_beam_search") + "    pos_embeds = self.embed_positions(attention_mask, "
           "past_key_values_length)\nIndexError: index out of range in self\n", "gen-past-max-positions"),
    # the cache of a batch of 8 reused for a batch of 3
    (_TB + _CACHE + "RuntimeError: Sizes of tensors must match except in dimension 2. Expected size 8 but got size 3 "
                    "for tensor number 1 in the list.\n", "gen-cache-reused"),
    # rank 0 alone in generate() under ZeRO-3, its peer gone
    (_TB + _GEN + '  File "/opt/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 406, in '
                  "_fetch_sub_module_impl\nRuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                  "[127.0.0.1]:18071\n", "zero3-generate-unsynced"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # a token id past the vocabulary, no generation past the model's length
    (_TB + "IndexError: index out of range in self\n", "gen-past-max-positions"),
    # inside generate(), but the token embedding's lookup (an id past the vocabulary)
    (_TB + _GEN + "    inputs_embeds = self.wte(input_ids)\n  File \"/opt/torch/nn/functional.py\", line 2615, in "
           "embedding\nIndexError: index out of range in self\n", "gen-past-max-positions"),
    # a dict without 'shape' elsewhere than generate's first argument
    (_TB + "    x = batch.shape[0]\nAttributeError: 'dict' object has no attribute 'shape'\n",
     "gen-inputs-dict-positional"),
    # torch.cat of the user's own tensors of different sizes
    (_TB + "    feats = torch.cat([a, b], dim=2)\nRuntimeError: Sizes of tensors must match except in dimension 2. "
           "Expected size 8 but got size 3 for tensor number 1 in the list.\n", "gen-cache-reused"),
    # a plain dict indexed as a list, not a Cache
    (_TB + "TypeError: 'set' object is not subscriptable\n", "hf-cache-legacy-format"),
    # a ZeRO-3 all-gather timed out in a training step, no generate()
    (_TB + '  File "/opt/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 406, in _fetch_sub_module_impl'
           "\nRuntimeError: [gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to "
           "complete\n", "zero3-generate-unsynced"),
])
def test_near_misses(text, name):
    assert sig(text) != name

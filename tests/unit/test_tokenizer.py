"""Tokenizers: byte-level round trip; a local tokenizer.json that does not parse is a clear DataError."""

from __future__ import annotations

import json

import pytest

from dscluster.data.tokenizer import ByteTokenizer, HFTokenizer, load_tokenizer, tokenizer_from_meta
from dscluster.errors import DataError

TEXTS = ["", "def f(x):\n    return x + 1\n", "繁體中文 and émojis 🚀\t\x00", "a" * 1000]


@pytest.mark.parametrize("text", TEXTS)
def test_byte_round_trip(text):
    tok = ByteTokenizer()
    ids = tok.encode(text)
    assert all(0 <= i < 256 for i in ids)
    assert tok.decode(ids) == text


def test_byte_decode_skips_eos_and_padding_ids():
    tok = ByteTokenizer()
    assert tok.decode([104, tok.eos_id, 105, 300]) == "hi"
    assert tok.vocab_size == 257 and tokenizer_from_meta(tok.describe()).vocab_size == 257


def test_default_is_byte():
    assert isinstance(load_tokenizer(None), ByteTokenizer) and isinstance(load_tokenizer("byte"), ByteTokenizer)


def test_unparsable_tokenizer_file_is_a_data_error(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(DataError) as err:
        load_tokenizer(bad)
    # Without the optional package the error says how to install it; with it, that the file is bad.
    assert err.value.setting == "tokenizer" and str(bad) in err.value.message


def test_missing_tokenizer_file(tmp_path):
    pytest.importorskip("tokenizers")
    with pytest.raises(DataError, match="does not exist"):
        HFTokenizer(tmp_path / "nope.json")


def test_hf_round_trip(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    tok.train_from_iterator(["def f(x): return x"] * 20, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", "<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    hf = load_tokenizer(path)
    assert hf.eos_id == tok.token_to_id("<|endoftext|>")
    assert hf.decode(hf.encode("def g(y): return y")) == "def g(y): return y"
    assert json.loads(json.dumps(hf.describe()))["type"] == "hf"

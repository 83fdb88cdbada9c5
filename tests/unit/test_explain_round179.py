"""Round 179's rules (issue 45, live: tokenizers and text data for language-model training): torch's tensor constructor
refusing ragged token-id lists (ragged-list-tensor), transformers' DataCollatorForLanguageModeling with mlm=True and a
tokenizer without a mask token (mlm-collator-no-mask-token), the tokenizers library's models with no unknown token
(tokenizer-missing-unk) and its file reader refusing a file that is not UTF-8 (tokenizer-file-not-utf8), a BERT-family
model given sequences longer than its position embeddings (positions-exceeded), a decoder's sequence classifier with no
pad_token_id (seqcls-no-pad-token-id), an integer mask given to torch's attention (attention-mask-dtype) and a loss
whose predictions and targets differ in number (loss-target-batch-mismatch); second wordings (other versions' and
callers' words than the live cases they were written from) and near misses, other components' text with like words
that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ragged-list-tensor", "mlm-collator-no-mask-token", "tokenizer-missing-unk", "tokenizer-file-not-utf8",
       "positions-exceeded", "seqcls-no-pad-token-id", "attention-mask-dtype", "loss-target-batch-mismatch")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text, expected", [
    # per-token NER labels of different lengths made into a tensor in a collate_fn (torch 1.13's words, the same)
    ('Traceback (most recent call last):\n'
     '  File "/home/u/ner/train.py", line 52, in collate\n'
     '    labels = torch.tensor([b["labels"] for b in batch])\n'
     'ValueError: expected sequence of length 23 at dim 1 (got 9)\n', "ragged-list-tensor"),
    # the legacy constructor of an old script, through DeepSpeed's launcher prefix
    ('[default0]:Traceback (most recent call last):\n'
     '[default0]:  File "pretrain_gpt.py", line 140, in get_batch\n'
     '[default0]:    tokens = torch.LongTensor(samples)\n'
     '[default0]:ValueError: expected sequence of length 1025 at dim 1 (got 611)\n', "ragged-list-tensor"),
    # transformers 4.x run_mlm.py copied for a GPT-2 tokenizer (the collator's words since 3.x)
    ('  File "/usr/lib/python3.8/site-packages/transformers/data/data_collator.py", line 410, in __post_init__\n'
     '    raise ValueError(\n'
     'ValueError: This tokenizer does not have a mask token which is necessary for masked language modeling. You '
     'should pass `mlm=False` to train on causal language modeling instead.\n', "mlm-collator-no-mask-token"),
    # a WordLevel model whose unk_token was named but never added to the vocabulary
    ("Exception: WordLevel error: Missing [UNK] token from the vocabulary\n", "tokenizer-missing-unk"),
    # the BPE model's words for an unk_token that is not in its vocabulary (tokenizers models/bpe)
    ('  File "/opt/venv/lib/python3.10/site-packages/tokenizers/implementations/base_tokenizer.py", line 240, in '
     'encode_batch\n'
     '    return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)\n'
     'Exception: Unk token `<unk>` not found in the vocabulary\n', "tokenizer-missing-unk"),
    # the Unigram model's words (tokenizers models/unigram)
    ("Exception: Encountered an unknown token but `unk_id` is missing\n", "tokenizer-missing-unk"),
    # BertWordPieceTokenizer.train(files) on a UTF-16 export, no launcher prefix
    ('Traceback (most recent call last):\n'
     '  File "train_tok.py", line 12, in <module>\n'
     '    tok.train(files=["corpus/wiki_ko.txt"], vocab_size=32000)\n'
     '  File "/usr/local/lib/python3.9/site-packages/tokenizers/implementations/bert_wordpiece.py", line 117, in train\n'
     '    self._tokenizer.train(files, trainer=trainer)\n'
     'Exception: stream did not contain valid UTF-8\n', "tokenizer-file-not-utf8"),
    # BERT of transformers 4.5 with token_type_ids given: the sum with the position embeddings
    ('  File "/usr/local/lib/python3.7/dist-packages/transformers/models/bert/modeling_bert.py", line 219, in forward\n'
     '    embeddings += position_embeddings\n'
     'RuntimeError: The size of tensor a (600) must match the size of tensor b (512) at non-singleton dimension 1\n',
     "positions-exceeded"),
    # ELECTRA's embeddings (a copy of BERT's), through torchrun's rank prefix
    ('[rank3]:   File "/opt/conda/lib/python3.11/site-packages/transformers/models/electra/modeling_electra.py", line '
     '165, in forward\n'
     '[rank3]:     buffered_token_type_ids_expanded = buffered_token_type_ids.expand(input_shape[0], seq_length)\n'
     '[rank3]: RuntimeError: The expanded size of the tensor (768) must match the existing size (512) at '
     'non-singleton dimension 1.  Target sizes: [16, 768].  Tensor sizes: [1, 512]\n', "positions-exceeded"),
    # the generic classifier of transformers 4.5x (modeling_layers.py) for Qwen2
    ('  File "/venv/lib/python3.11/site-packages/transformers/modeling_layers.py", line 138, in forward\n'
     '    raise ValueError("Cannot handle batch sizes > 1 if no padding token is defined.")\n'
     'ValueError: Cannot handle batch sizes > 1 if no padding token is defined.\n', "seqcls-no-pad-token-id"),
    # torch 2.x's attn_mask of an integer dtype (functional.py _canonical_mask)
    ("AssertionError: only bool and floating types of attn_mask are supported\n", "attention-mask-dtype"),
    # torch 1.8's multi_head_attention_forward
    ("AssertionError: Only float, byte, and bool types are supported for attn_mask, not torch.int64\n",
     "attention-mask-dtype"),
    # F.scaled_dot_product_attention given a tokenizer's int64 mask (aten attention.cpp validate_sdpa_input)
    ("RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
     "long int and  query.dtype: float instead.\n", "attention-mask-dtype"),
    # nll_loss of an older torch, a classifier given one label per token
    ('  File "/usr/lib/python3/dist-packages/torch/nn/functional.py", line 2264, in nll_loss\n'
     '    ret = torch._C._nn.nll_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index)\n'
     'ValueError: Expected input batch_size (8) to match target batch_size (1024).\n', "loss-target-batch-mismatch"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text, not_this", [
    # torch.Size's own refusal and numpy's ragged array: other words
    ("TypeError: expected sequence object with len >= 0 or a single integer\n", "ragged-list-tensor"),
    ("ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 "
     "dimensions. The detected shape was (4,) + inhomogeneous part.\n", "ragged-list-tensor"),
    # the default collate's stack of unequal tensors stays its own family
    ("RuntimeError: stack expects each tensor to be equal size, but got [12] at entry 0 and [9] at entry 1\n",
     "ragged-list-tensor"),
    # the permutation collator's words: mlm=False is no fix there
    ("ValueError: This tokenizer does not have a mask token which is necessary for permutation language modeling. "
     "Please add a mask token if you want to use this tokenizer.\n", "mlm-collator-no-mask-token"),
    # transformers' log line for a mask token read before it is set (not an error)
    ("[ERROR|tokenization_utils_base.py:1095] Using mask_token, but it is not set yet.\n"
     "RuntimeError: CUDA error: device-side assert triggered\n", "mlm-collator-no-mask-token"),
    # a hand-written vocabulary lookup
    ('  File "vocab.py", line 30, in encode\n    return [self.stoi[w] for w in text.split()]\n'
     "KeyError: '[UNK]'\n", "tokenizer-missing-unk"),
    # Python's own decoder on a Latin-1 file, and a Rust tool's panic: not the tokenizers library's Exception
    ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 3: invalid continuation byte\n",
     "tokenizer-file-not-utf8"),
    ("thread 'main' panicked at src/main.rs:14:10:\ncalled `Result::unwrap()` on an `Err` value: Error { kind: "
     "InvalidData, message: \"stream did not contain valid UTF-8\" }\n", "tokenizer-file-not-utf8"),
    # torch's expand and broadcast words at other code lines: another shape mistake
    ('    attention_mask = attention_mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len)\n'
     "RuntimeError: The expanded size of the tensor (64) must match the existing size (32) at non-singleton "
     "dimension 3.  Target sizes: [2, 1, 64, 64].  Tensor sizes: [2, 1, 1, 32]\n", "positions-exceeded"),
    ('    hidden_states = hidden_states + residual\n'
     "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 1\n",
     "positions-exceeded"),
    # the tokenizer without a pad token stays its own family
    ("ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
     "`pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
     "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.\n", "seqcls-no-pad-token-id"),
    # torch's deprecation warning for masks of two types, and a transformers model's mask of the wrong size
    ("UserWarning: Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
     "instead.\nRuntimeError: CUDA out of memory.\n", "attention-mask-dtype"),
    ("ValueError: Attention mask should be of size (2, 1, 8, 8), but is torch.Size([2, 8])\n", "attention-mask-dtype"),
    # cross_entropy's other shape refusals and BCE's: other words
    ("RuntimeError: Expected target size [4, 50257], got [4, 16]\n", "loss-target-batch-mismatch"),
    ("ValueError: Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 1]))\n",
     "loss-target-batch-mismatch"),
])
def test_near_misses(text, not_this):
    assert sig(text) != not_this

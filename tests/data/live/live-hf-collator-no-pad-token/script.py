"""The user trains a GPT-2-style model with its own word-level tokenizer (built with `tokenizers`, no Hub download)
and DataCollatorWithPadding for sentences of different lengths; the tokenizer has no pad token (GPT-2's has none
either) and the user never sets one."""
import argparse  # noqa: I001 - kept as captured (log.txt line numbers)

import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from transformers import (DataCollatorWithPadding, GPT2Config, GPT2ForSequenceClassification,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()

words = "the a cat dog sat ran on mat fast slow and".split()
vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}
raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
sentences = ["the cat sat", "a dog ran on the mat", "the dog ran fast and the cat sat slow", "a cat"]


class Sentences(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        enc = tok(sentences[i % 4])
        return {**enc, "labels": i % 2}


model = GPT2ForSequenceClassification(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(vocab),
                                                 n_positions=32, num_labels=2, pad_token_id=0))
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Sentences(), data_collator=DataCollatorWithPadding(tok))
trainer.train()

"""The user pre-trains a tiny GPT-2 (causal LM) with the Trainer on their own BPE tokenizer and copies the data
collator from a BERT tutorial: DataCollatorForLanguageModeling(tokenizer) keeps its default mlm=True, masked language
modeling, which needs a [MASK] token a GPT-2-style tokenizer does not have."""
import argparse  # noqa: I001 - kept as captured (log.txt line numbers)

import torch
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from transformers import (DataCollatorForLanguageModeling, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast,
                          Trainer, TrainingArguments)

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()

corpus = ["the cat sat on the mat", "a dog ran fast", "the quick brown fox jumps over the lazy dog",
          "birds sing in the morning"] * 8
raw = Tokenizer(BPE(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(corpus, BpeTrainer(vocab_size=150, special_tokens=["[UNK]", "<|endoftext|>"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>")
tok.pad_token = tok.eos_token


class Lines(torch.utils.data.Dataset):
    def __len__(self):
        return len(corpus)

    def __getitem__(self, i):
        return tok(corpus[i], truncation=True, max_length=32)


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tok), n_positions=64,
                                   pad_token_id=tok.pad_token_id))
collator = DataCollatorForLanguageModeling(tokenizer=tok)  # the mistake: mlm defaults to True; a causal LM wants mlm=False
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
Trainer(model=model, args=targs, train_dataset=Lines(), data_collator=collator).train()

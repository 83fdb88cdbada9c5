"""The user fine-tunes a tiny GPT-2 classifier with the Trainer on their own BPE tokenizer. Following the usual
advice they set tokenizer.pad_token = tokenizer.eos_token, so padding works, but never set model.config.pad_token_id,
which GPT2ForSequenceClassification needs to find each row's last real token in a batch larger than one."""
import argparse  # noqa: I001 - kept as captured (log.txt line numbers)

import torch
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from transformers import (DataCollatorWithPadding, GPT2Config, GPT2ForSequenceClassification,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()

texts = ["the film was great", "terrible acting and a boring plot", "i loved it", "not worth the time at all"]
raw = Tokenizer(BPE(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(texts * 4, BpeTrainer(vocab_size=120, special_tokens=["[UNK]", "<|endoftext|>"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>")
tok.pad_token = tok.eos_token


class Reviews(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return {**tok(texts[i % 4]), "labels": (i + 1) % 2}


model = GPT2ForSequenceClassification(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tok),
                                                 n_positions=64, num_labels=2))  # the mistake: no pad_token_id
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
Trainer(model=model, args=targs, train_dataset=Reviews(), data_collator=DataCollatorWithPadding(tok)).train()

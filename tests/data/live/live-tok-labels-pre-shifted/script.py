"""The user trains a tiny GPT-2 under DeepSpeed and, as for a hand-written LM loss, shifts the labels themselves
(labels = input_ids[:, 1:]) before passing them to GPT2LMHeadModel, which shifts labels inside its loss: the labels
come one token shorter than the logits."""
import argparse

import deepspeed
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

corpus = ["the cat sat on the mat", "a dog ran fast", "the quick brown fox jumps over the lazy dog",
          "birds sing in the morning"] * 4
raw = Tokenizer(BPE(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(corpus, BpeTrainer(vocab_size=150, special_tokens=["[UNK]", "[PAD]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]")
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tok), n_positions=64))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):
    batch = tok(corpus[step * 2:step * 2 + 2], padding="max_length", max_length=16, return_tensors="pt")
    labels = batch["input_ids"][:, 1:].masked_fill(batch["attention_mask"][:, 1:] == 0, -100)  # the mistake: shifted
    loss = engine(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss
    engine.backward(loss)
    engine.step()

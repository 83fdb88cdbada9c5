"""The user pre-tokenizes a small corpus with their own BPE tokenizer (trained here) and turns the list of token-id
lists into one tensor with torch.tensor for a DeepSpeed GPT-2 run; the sentences have different lengths and nothing
pads them."""
import argparse

import deepspeed
import torch
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

corpus = ["the cat sat on the mat", "a dog ran fast", "the quick brown fox jumps over the lazy dog",
          "birds sing in the morning"] * 4
tok = Tokenizer(BPE(unk_token="[UNK]"))
tok.pre_tokenizer = Whitespace()
tok.train_from_iterator(corpus, BpeTrainer(vocab_size=150, special_tokens=["[UNK]"]))
ids = [enc.ids for enc in tok.encode_batch(corpus)]
data = torch.tensor(ids)  # the mistake: lists of different lengths, never padded
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=tok.get_vocab_size(), n_positions=64))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):
    batch = data[step * 2:step * 2 + 2]
    loss = engine(input_ids=batch, labels=batch).loss
    engine.backward(loss)
    engine.step()

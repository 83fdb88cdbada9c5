"""Under ZeRO-3 the user adds special tokens and calls resize_token_embeddings on engine.module after
deepspeed.initialize (the embedding is partitioned: each rank holds an empty placeholder) instead of before."""
import argparse

import deepspeed
import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, bos_token_id=0, eos_token_id=0)
model = transformers.GPT2LMHeadModel(config)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
engine.module.resize_token_embeddings(104)  # 4 special tokens added to the tokenizer
for _ in range(3):
    ids = torch.randint(0, 104, (2, 16))
    loss = engine(input_ids=ids, labels=ids).loss
    engine.backward(loss)
    engine.step()

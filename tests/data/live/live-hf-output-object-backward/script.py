"""A tiny GPT-2 trained under DeepSpeed in the user's own loop: the model returns a CausalLMOutput, and the user passes
that whole output to engine.backward instead of its .loss."""
import argparse

import deepspeed
import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100)
model = transformers.GPT2LMHeadModel(config)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):  # noqa: B007 - kept as captured
    input_ids = torch.randint(0, 100, (2, 16))
    loss = engine(input_ids=input_ids, labels=input_ids)  # the mistake: this is the model's output object
    engine.backward(loss)
    engine.step()

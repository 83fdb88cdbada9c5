"""Under ZeRO-3 the user zeroes the pad token's embedding row (wte.weight[pad_id]) on engine.module after
deepspeed.initialize, outside deepspeed.zero.GatheredParameters: the weight is a partitioned placeholder of size 0."""
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
pad_id = 99
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
with torch.no_grad():
    engine.module.get_input_embeddings().weight[pad_id].zero_()
for _ in range(3):
    ids = torch.randint(0, 99, (2, 16))
    loss = engine(input_ids=ids, labels=ids).loss
    engine.backward(loss)
    engine.step()

"""The user trains a tiny GPT-2 under ZeRO-3 and evaluates on rank 0 only (one validation number to print), while the
other ranks go on to the barrier at the end of the epoch. Under ZeRO-3 the forward gathers each layer's parameters with
a collective, which the other ranks never call. A short process-group timeout while debugging ends the hang."""
import argparse
from datetime import timedelta

import deepspeed
import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=500, n_positions=64))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

for _step in range(3):
    ids = torch.randint(0, 500, (4, 16))
    loss = engine(input_ids=ids, labels=ids).loss
    engine.backward(loss)
    engine.step()

if dist.get_rank() == 0:  # the mistake: the ZeRO-3 forward below needs every rank
    engine.eval()
    with torch.no_grad():
        ids = torch.randint(0, 500, (4, 16))
        val = engine(input_ids=ids, labels=ids).loss
    print(f"val loss {val.item():.4f}")
dist.barrier()

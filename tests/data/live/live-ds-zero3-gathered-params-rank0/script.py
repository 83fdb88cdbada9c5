"""The user trains a tiny GPT-2 under ZeRO-3 and, to export full fp32 weights, gathers the partitioned parameters
with deepspeed.zero.GatheredParameters on rank 0 only (the rank that writes the file), while the other rank goes on
to the final barrier. GatheredParameters all-gathers every parameter: a collective that every rank must enter. A
short process-group timeout while debugging ends the hang."""
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

if dist.get_rank() == 0:  # the mistake: GatheredParameters is a collective, called by rank 0 alone
    with deepspeed.zero.GatheredParameters(list(engine.module.parameters()), modifier_rank=None):
        state = {k: v.detach().clone() for k, v in engine.module.state_dict().items()}
    torch.save(state, "model_fp32.pt")
    print(f"saved {len(state)} tensors")
dist.barrier()

"""A small GPT-2 pretraining run sized from the command line: --n-embd and --n-layer are added to argparse without
type=int, so the config gets the strings "64" and "2", which transformers 5's strict config fields refuse."""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--n-embd", default=64)
parser.add_argument("--n-layer", default=2)
parser.add_argument("--n-head", type=int, default=4)
args, _ = parser.parse_known_args()

dist.init_process_group("gloo")
config = GPT2Config(vocab_size=1000, n_positions=128, n_embd=args.n_embd, n_layer=args.n_layer, n_head=args.n_head)
model = DDP(GPT2LMHeadModel(config))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(3):
    ids = torch.randint(0, 1000, (4, 32))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()

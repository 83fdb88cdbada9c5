"""A tiny causal language model under DDP: the logits are (batch, seq, vocab) and go to cross_entropy with the
(batch, seq) next-token ids without flattening them (cross_entropy wants the classes in dimension 1)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
V, T = 50, 8
model = DDP(torch.nn.Sequential(torch.nn.Embedding(V, 32), torch.nn.Linear(32, V)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, V, (16, T + 1))
for step in range(3):
    batch = tokens[step * 4:(step + 1) * 4]
    logits = model(batch[:, :-1])  # (B, T, V)
    loss = F.cross_entropy(logits, batch[:, 1:])  # the mistake: no .view(-1, V) / .view(-1)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

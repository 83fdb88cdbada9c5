"""A tiny GPT-2 (from a config) trained under DDP, exported with torch.jit.trace without torchscript=True in its
config (the model returns a ModelOutput)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


cfg = GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=128, n_positions=64, bos_token_id=0, eos_token_id=0)
model = DDP(GPT2LMHeadModel(cfg))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    ids = torch.randint(0, 128, (4, 16))
    loss = model(input_ids=ids, labels=ids).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    net = model.module.eval()
    traced = torch.jit.trace(net, torch.randint(0, 128, (1, 16)))
    traced.save("gpt2_traced.pt")
dist.barrier()
dist.destroy_process_group()

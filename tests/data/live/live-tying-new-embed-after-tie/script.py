"""Domain tokens were added to the vocabulary (1000 -> 1064 ids). The user builds the GPT-2 model from its old config
and replaces its token embedding with a bigger nn.Embedding by hand (instead of resize_token_embeddings): the tied
lm_head keeps the old 1000-row weight."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
OLD_VOCAB, NEW_VOCAB = 1000, 1064

cfg = GPT2Config(vocab_size=OLD_VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64)
model = GPT2LMHeadModel(cfg)
old = model.transformer.wte.weight.data
model.transformer.wte = nn.Embedding(NEW_VOCAB, cfg.n_embd)
with torch.no_grad():
    model.transformer.wte.weight[:OLD_VOCAB] = old
model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(5):
    ids = torch.randint(0, NEW_VOCAB, (4, 32))
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print(f"step {step} loss {out.loss.item():.3f}")
dist.destroy_process_group()

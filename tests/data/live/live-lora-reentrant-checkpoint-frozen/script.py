"""LoRA on a small transformer-style model whose blocks run under activation checkpointing the reentrant way
(torch.utils.checkpoint with use_reentrant=True): the token embedding is frozen, so the hidden states entering each
checkpointed block do not require grad, the reentrant checkpoint's output does not either, and the loss has no graph
back to the adapters (PEFT calls enable_input_require_grads() for this; use_reentrant=False needs nothing)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])


class LoRALinear(torch.nn.Module):
    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


class Block(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, h):
        return h + torch.relu(self.proj(self.norm(h)))


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=500, d=32, layers=4):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(layers))
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.embed.weight
        self.gradient_checkpointing = True

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=True) if self.gradient_checkpointing else block(h)
        return self.lm_head(h)


torch.manual_seed(0)
model = TinyLM()
model.requires_grad_(False)
for block in model.blocks:
    block.proj = LoRALinear(block.proj)
model = DDP(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
for step in range(5):
    ids = torch.randint(0, 500, (4, 24))
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 500), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print("step", step, loss.item())
dist.destroy_process_group()

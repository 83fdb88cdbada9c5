"""The user freezes the base model and builds the optimizer over the parameters that require grad, then injects
the LoRA adapters: at that point no parameter requires grad, so the optimizer is given none."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))


class LoRALinear(torch.nn.Module):
    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


def add_lora(model, r=8):
    for name, child in model.named_children():
        if isinstance(child, torch.nn.Linear):
            setattr(model, name, LoRALinear(child, r=r))
        else:
            add_lora(child, r)
    return model


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
for p in model.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=1e-4, weight_decay=0.0)
model = DDP(add_lora(model))
for step in range(5):
    loss = model(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if int(os.environ["RANK"]) == 0:
        print("step", step, loss.item())
dist.destroy_process_group()

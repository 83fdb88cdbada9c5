"""The LoRA injection sits inside the main-process block that prints the trainable-parameter count, so only rank 0
freezes the base and adds adapters; rank 1 wraps the plain, fully trainable model in DDP."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

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


def get_lora_model(model):
    for p in model.parameters():
        p.requires_grad_(False)
    model[0], model[2] = LoRALinear(model[0]), LoRALinear(model[2])
    return model


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
if rank == 0:
    model = get_lora_model(model)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    print(f"trainable params: {trainable} || all params: {total} || trainable%: {100 * trainable / total:.2f}")
ddp = DDP(model)
opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-3)
for _step in range(5):
    loss = ddp(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()

"""LoRA fine-tuning under DDP, then the adapters are merged into the base weights for export: the user writes the
merge as lora_A.T @ lora_B.T (the transpose of B @ A), whose shape is (in, out), not the weight's (out, in)."""
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

    @torch.no_grad()
    def merge(self):
        self.base.weight += (self.lora_A.t() @ self.lora_B.t()) * self.scale
        return self.base


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
for p in model.parameters():
    p.requires_grad_(False)
model[0], model[2] = LoRALinear(model[0]), LoRALinear(model[2])
ddp = DDP(model)
opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-3)
for _step in range(5):
    loss = ddp(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
if rank == 0:
    model[0], model[2] = model[0].merge(), model[2].merge()
    torch.save(model.state_dict(), "merged.pt")
dist.barrier()
dist.destroy_process_group()

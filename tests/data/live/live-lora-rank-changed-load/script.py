"""The user resumes LoRA fine-tuning from adapter.pt, saved by last week's run with r=8; the script's default rank
has since been raised to 16, so the adapters built now do not have the saved ones' shapes. strict=False is passed
(to skip the base weights the file leaves out), which does not skip a size mismatch."""
import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--lora_r", type=int, default=16)
parser.add_argument("--resume", default="adapter.pt")
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
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


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
for p in model.parameters():
    p.requires_grad_(False)
model[0], model[2] = LoRALinear(model[0], r=args.lora_r), LoRALinear(model[2], r=args.lora_r)
model.load_state_dict(torch.load(args.resume), strict=False)
ddp = DDP(model)
opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-3)
for _step in range(5):
    loss = ddp(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()

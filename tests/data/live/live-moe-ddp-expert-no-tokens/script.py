"""Hand-written top-1 mixture-of-experts (8 experts) trained with DDP; only experts that got tokens are run."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
torch.manual_seed(dist.get_rank())


class Top1MoE(torch.nn.Module):
    def __init__(self, dim=32, n_experts=8):
        super().__init__()
        self.gate = torch.nn.Linear(dim, n_experts, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(n_experts))

    def forward(self, x):  # x: [tokens, dim]
        probs = self.gate(x).softmax(-1)
        w, idx = probs.max(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            mask = idx == e
            if mask.any():  # skip experts with no tokens (saves compute)
                out[mask] = expert(x[mask]) * w[mask, None]
        return out


model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), Top1MoE(), torch.nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    x = torch.randn(4, 16)  # 4 tokens for 8 experts
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()

"""Hand-written top-2 mixture-of-experts FFN trained with DDP."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)


class Top2MoE(torch.nn.Module):
    def __init__(self, dim=32, n_experts=4, k=2):
        super().__init__()
        self.k = k
        self.gate = torch.nn.Linear(dim, n_experts, bias=False)
        self.experts = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.GELU(), torch.nn.Linear(64, dim))
            for _ in range(n_experts))

    def forward(self, x):  # x: [tokens, dim]
        probs = self.gate(x).softmax(-1)                        # [T, E]
        weights, idx = probs.topk(self.k, dim=-1)               # [T, k]
        all_out = torch.stack([e(x) for e in self.experts], 1)  # [T, E, dim]
        chosen = torch.gather(all_out, 1, idx)                  # pick the k experts' outputs
        return (chosen * weights.unsqueeze(-1)).sum(1)


model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), Top2MoE(), torch.nn.Linear(32, 1)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(5):
    x = torch.randn(64, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

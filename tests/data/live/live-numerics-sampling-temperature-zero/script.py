"""On-policy fine-tuning of a tiny language model: rollouts are sampled with torch.multinomial from
softmax(logits / temperature), and the config's temperature is 0 (meant as 'greedy'): logits / 0 is +-inf, softmax
of it NaN."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

CONFIG = {"vocab": 64, "dim": 32, "rollout_len": 8, "temperature": 0.0, "lr": 1e-3}
V, D = CONFIG["vocab"], CONFIG["dim"]
policy = DDP(torch.nn.Sequential(torch.nn.Embedding(V, D), torch.nn.Linear(D, V)))
opt = torch.optim.Adam(policy.parameters(), lr=CONFIG["lr"])


def rollout(prompt: torch.Tensor) -> torch.Tensor:
    seq = prompt
    with torch.no_grad():
        for _ in range(CONFIG["rollout_len"]):
            logits = policy(seq)[:, -1, :]
            nxt = torch.multinomial(torch.softmax(logits / CONFIG["temperature"], dim=-1), num_samples=1)
            seq = torch.cat([seq, nxt], dim=1)
    return seq


for step in range(3):
    seq = rollout(torch.randint(0, V, (4, 4)))
    logp = torch.log_softmax(policy(seq[:, :-1]), -1).gather(-1, seq[:, 1:, None]).squeeze(-1)
    reward = (seq[:, 4:] % 2 == 0).float().mean(-1, keepdim=True)
    loss = -(logp[:, 3:] * reward).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()

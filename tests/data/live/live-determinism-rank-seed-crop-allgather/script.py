"""Each rank seeds with seed + rank (so augmentations differ per rank), and the random crop length is drawn from
that RNG. The per-step predictions are then all_gathered for a metric: the ranks' tensors differ in length."""
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(1000 + rank)

model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
signal = torch.randn(128, 16)
for step in range(3):
    crop = int(torch.randint(32, 96, (1,)))  # random crop length from the per-rank RNG
    start = int(torch.randint(0, 128 - crop, (1,)))
    x = signal[start:start + crop]
    out = model(x)
    loss = (out - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    preds = out.detach().argmax(dim=-1)
    gathered = [torch.empty_like(preds) for _ in range(world)]
    dist.all_gather(gathered, preds)
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f} gathered {sum(g.numel() for g in gathered)}")
dist.destroy_process_group()

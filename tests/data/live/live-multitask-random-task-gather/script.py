"""Task sampling per step: each rank draws its task with Python's random seeded by seed + rank (so that "the ranks
see different tasks"), the heads have different output sizes (sentiment 3 classes, topic 7), and the logits are
all_gathered for the accuracy with buffers shaped like the local logits: the ranks gather tensors of different
sizes."""
import random
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
random.seed(1234 + rank)

NUM_CLASSES = {"sentiment": 3, "topic": 7}
data = {t: (torch.randn(64, 16), torch.randint(0, n, (64,))) for t, n in NUM_CLASSES.items()}


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.heads = torch.nn.ModuleDict({t: torch.nn.Linear(32, n) for t, n in NUM_CLASSES.items()})

    def forward(self, x, task):
        return self.heads[task](self.encoder(x))


model = DDP(MultiTask(), find_unused_parameters=True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(20):
    task = random.choice(list(NUM_CLASSES))
    idx = torch.randint(0, 64, (8,))
    x, y = data[task][0][idx], data[task][1][idx]
    logits = model(x, task)
    loss = torch.nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    gathered = [torch.zeros_like(logits) for _ in range(world)]
    dist.all_gather(gathered, logits.detach())
    labels = [torch.zeros_like(y) for _ in range(world)]
    dist.all_gather(labels, y)
    acc = (torch.cat(gathered).argmax(-1) == torch.cat(labels)).float().mean()
    if rank == 0:
        print(f"step {step} task {task} loss {loss.item():.4f} acc {acc.item():.3f}", flush=True)

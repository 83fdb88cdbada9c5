"""The user collects every rank's validation predictions with dist.all_gather into a list of tensors shaped like their
own; the ranks' evaluation shards differ in length (the last batch is short on one rank)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
model = DDP(torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

val = torch.randn(101, 8)
shard = val[rank::world]  # 51 rows on rank 0, 50 on rank 1
with torch.no_grad():
    preds = model(shard).argmax(-1)
gathered = [torch.zeros_like(preds) for _ in range(world)]  # the mistake: assumes every rank has as many
dist.all_gather(gathered, preds)
print(f"val predictions: {sum(g.numel() for g in gathered)}")
dist.destroy_process_group()

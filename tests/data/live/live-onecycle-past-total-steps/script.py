"""The user sized OneCycleLR with steps_per_epoch=len(dataset) // batch_size but the DataLoader keeps the last
partial batch (drop_last=False), so each epoch takes one step more than the scheduler was told."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

from torch.utils.data import DataLoader, TensorDataset  # noqa: E402
from torch.utils.data.distributed import DistributedSampler  # noqa: E402

ds = TensorDataset(torch.randn(200, 16), torch.randint(0, 2, (200,)))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=16, sampler=sampler)  # 100 samples per rank -> 7 batches
epochs = 3
model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
steps_per_epoch = len(ds) // dist.get_world_size() // 16  # the mistake: 6, the loader yields 7
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=steps_per_epoch)
for epoch in range(epochs):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    if dist.get_rank() == 0:
        print(f"epoch {epoch} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")
dist.destroy_process_group()

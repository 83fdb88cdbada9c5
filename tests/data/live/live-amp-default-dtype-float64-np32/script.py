"""A physics surrogate model trained under DDP on CPU: the script calls torch.set_default_dtype(torch.float64) at
the top for double-precision training, so the model's weights are float64; the simulation snapshots are stored
as float32 arrays (np.float32, as the simulator writes them) and torch.from_numpy keeps their float32."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

torch.set_default_dtype(torch.float64)  # double precision for the ODE surrogate

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)

rng = np.random.default_rng(0)
states = rng.standard_normal((512, 6), dtype=np.float32)  # the simulator's snapshot files are float32
next_states = states + 0.01 * np.tanh(states)
ds = TensorDataset(torch.from_numpy(states), torch.from_numpy(next_states))
loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds, seed=0))

model = DDP(nn.Sequential(nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 6)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    loader.sampler.set_epoch(epoch)
    for s, s_next in loader:
        loss = nn.functional.mse_loss(s + model(s), s_next)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.6f}", flush=True)
dist.destroy_process_group()

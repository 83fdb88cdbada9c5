"""Exact resume: the checkpoint keeps every RNG state, numpy's included (np.random.get_state()), and the run
reloads it with torch.load (default weights_only=True since torch 2.6)."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)
np.random.seed(0)
random.seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ckpt = f"ckpt_rank{rank}.pt"
if not os.path.exists(ckpt):
    for _ in range(2):
        loss = model(torch.from_numpy(np.random.randn(4, 8)).float()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "torch_rng": torch.get_rng_state(),
                "numpy_rng": np.random.get_state(), "python_rng": random.getstate()}, ckpt)
    dist.barrier()

# resume (as after a preemption)
state = torch.load(ckpt)
model.load_state_dict(state["model"])
opt.load_state_dict(state["optim"])
torch.set_rng_state(state["torch_rng"])
np.random.set_state(state["numpy_rng"])
random.setstate(state["python_rng"])
print(f"rank {rank} resumed")
dist.destroy_process_group()

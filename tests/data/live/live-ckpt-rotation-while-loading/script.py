"""The user resumes from the newest checkpoint in ckpt/ and keeps only the newest one on disk: rank 0 saves the next
checkpoint and deletes the older ones right after the first step, while rank 1 (slower to build its data) has not yet
loaded the checkpoint it chose."""
import glob
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
os.makedirs("ckpt", exist_ok=True)
if rank == 0 and not glob.glob("ckpt/step_*.pt"):
    torch.save(torch.nn.Linear(16, 4).state_dict(), "ckpt/step_100.pt")  # the earlier run's last checkpoint
dist.barrier()
latest = max(glob.glob("ckpt/step_*.pt"), key=lambda p: int(p.split("_")[-1][:-3]))
step = int(latest.split("_")[-1][:-3])
model = torch.nn.Linear(16, 4)
start = time.monotonic()
features = []
while time.monotonic() - start < 15 * rank:  # stands in for building this rank's data, slower on rank 1
    features.append(torch.randn(256, 256).sort().values.sum())
model.load_state_dict(torch.load(latest, map_location="cpu"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(4, 16)).sum().backward()
optimizer.step()
step += 1
if rank == 0:
    torch.save(model.state_dict(), f"ckpt/step_{step}.pt")
    for old in glob.glob("ckpt/step_*.pt"):
        if old != f"ckpt/step_{step}.pt":
            os.remove(old)  # keep only the newest checkpoint
dist.barrier()
dist.destroy_process_group()

"""Export to safetensors for a serving stack that wants (in, out) weights: the user stores each Linear weight
transposed (w.t(), a non-contiguous view) in the dict given to safetensors' save_file."""
from datetime import timedelta

import torch
import torch.distributed as dist
from safetensors.torch import save_file
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

if rank == 0:
    export = {}
    for name, t in model.module.state_dict().items():
        export[name] = t.t() if t.dim() == 2 else t
    save_file(export, "model.safetensors")
dist.barrier()
dist.destroy_process_group()

"""Export step: to avoid allocating a second copy, the user builds the export model under torch.device("meta"),
load_state_dict()s the trained weights into it (without assign=True), saves its state_dict, then checks the file by
loading it into a fresh model."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


def build():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))


model = DDP(build())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

if rank == 0:
    with torch.device("meta"):
        export_model = build()
    export_model.load_state_dict(model.module.state_dict())
    torch.save(export_model.state_dict(), "export.pt")
    check = build()
    check.load_state_dict(torch.load("export.pt"))
    print("export verified")
dist.barrier()
dist.destroy_process_group()

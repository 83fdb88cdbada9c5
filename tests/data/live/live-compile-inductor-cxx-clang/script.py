"""The user copied a snippet that makes Inductor build its CPU kernels with clang (torch._inductor.config.cpp.cxx =
("clang++",), faster builds on their laptop) into the training script; the cluster's nodes have g++ only, so Inductor
finds no working C++ compiler at the first compiled forward."""
import torch
import torch._inductor.config
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

torch._inductor.config.cpp.cxx = ("clang++",)  # the mistake: a compiler the nodes do not have

model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16)))
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _step in range(3):
    x = torch.randn(8, 16)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

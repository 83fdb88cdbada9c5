"""ONNX export at the end of training with torch.onnx.export's defaults (the dynamo exporter in torch 2.13)."""
from datetime import timedelta

import torch
import torch.distributed as dist
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
    net = model.module.eval()
    torch.onnx.export(net, (torch.randn(1, 16),), "model.onnx", input_names=["x"], output_names=["y"])
    print("exported model.onnx")
dist.barrier()
dist.destroy_process_group()

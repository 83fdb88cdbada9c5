"""The user wants Inductor's autotuning without CUDA graphs, so they pass both mode="max-autotune" and an options dict
turning cudagraphs off. torch.compile accepts either a mode or an options dict, never both."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
model = torch.compile(model, mode="max-autotune", options={"triton.cudagraphs": False})  # the mistake: mode and options
ddp = DDP(model)
opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
for _step in range(3):
    x = torch.randn(8, 16)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

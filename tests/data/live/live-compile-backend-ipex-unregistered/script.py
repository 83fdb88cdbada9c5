"""The user trains on Xeon CPU nodes and, following Intel's guide, compiles with the IPEX backend
(torch.compile(model, backend="ipex")), but never imports intel_extension_for_pytorch, the package whose import
registers that backend with Dynamo (and it is not installed on these nodes either)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
model = torch.compile(model, backend="ipex")  # the mistake: a backend no imported package registered
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _step in range(3):
    x = torch.randn(8, 16)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

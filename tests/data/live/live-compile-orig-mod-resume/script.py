"""The user resumes DDP training from last week's checkpoint (ckpt/model.pt, saved by the same script before they added
torch.compile: model.state_dict() of the plain model). This week they compile the model first and load the
checkpoint into the compiled module: its state_dict keys all carry the `_orig_mod.` prefix of torch.compile's
OptimizedModule, so none of the checkpoint's keys match."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
model = torch.compile(model)
model.load_state_dict(torch.load("ckpt/model.pt", map_location="cpu"))  # the mistake: loaded into the compiled wrapper
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _step in range(3):
    x = torch.randn(4, 8)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
if dist.get_rank() == 0:
    torch.save(model.state_dict(), "ckpt/model.pt")
dist.destroy_process_group()

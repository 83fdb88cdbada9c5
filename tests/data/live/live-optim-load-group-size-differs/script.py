"""The user resumes a fine-tune: the checkpoint's optimizer was built with one group for all parameters, the new
script splits decay / no-decay groups (bias excluded from weight decay), and loads the old optimizer state."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
if dist.get_rank() == 0 and not os.path.exists("ckpt.pt"):  # the earlier run's checkpoint
    old = torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.save({"model": model.state_dict(), "optimizer": old.state_dict()}, "ckpt.pt")
dist.barrier()
ddp = DDP(model)
decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=1e-3)
ckpt = torch.load("ckpt.pt")
model.load_state_dict(ckpt["model"])
opt.load_state_dict(ckpt["optimizer"])  # the mistake: 1 group saved, 2 groups now
for step in range(3):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

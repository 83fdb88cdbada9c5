"""The user's model has an auxiliary head used only when a flag is set; training never sets it, so that head's
parameters get no gradient, and DDP (find_unused_parameters left False) fails on the next iteration."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 2)
        self.aux_head = torch.nn.Linear(16, 4)  # only used with use_aux=True

    def forward(self, x, use_aux=False):
        h = torch.relu(self.body(x))
        out = self.head(h)
        if use_aux:
            return out, self.aux_head(h)
        return out


dist.init_process_group(backend="gloo")
model = DDP(Net())  # the mistake: aux_head gets no gradient, find_unused_parameters is False
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(5):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()

"""Mean aggregation over neighbours with index_add_ under DDP: the script makes the directed edge list undirected by
concatenating the reversed edges into the destination index, but computes the messages from the original edges only,
so index_add_ gets twice as many indices as message rows."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(100 + rank)

num_nodes, num_edges = 40, 120
src = torch.randint(0, num_nodes, (num_edges,), generator=g)
dst = torch.randint(0, num_nodes, (num_edges,), generator=g)
x = torch.randn(num_nodes, 8, generator=g)
y = torch.randn(num_nodes, 1, generator=g)


class MeanConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, src, dst):
        # undirected: every edge also goes the other way
        all_dst = torch.cat([dst, src])
        messages = self.lin(x)[src]
        out = torch.zeros(x.size(0), messages.size(1))
        out.index_add_(0, all_dst, messages)
        deg = torch.bincount(all_dst, minlength=x.size(0)).clamp(min=1).unsqueeze(1)
        return out / deg


model = DDP(nn.Sequential(MeanConv(8, 16)))
readout = nn.Linear(16, 1)
opt = torch.optim.SGD([*model.parameters(), *readout.parameters()], lr=0.01)
for _ in range(5):
    h = torch.relu(model.module[0](x, src, dst))
    loss = nn.functional.mse_loss(readout(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

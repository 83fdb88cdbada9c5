"""A hand-written graph convolution (message passing with scatter_add_) under DDP: the aggregation buffer's row count
is taken as edge_index.max(), the largest node id, not the number of nodes (max + 1)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(rank)


def ring_graph(n):
    src = torch.arange(n)
    dst = (src + 1) % n
    return torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], dim=1)  # undirected ring, [2, 2n]


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.msg = nn.Linear(d_in, d_out)
        self.self_loop = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = self.msg(x[src])
        num_nodes = int(edge_index.max())
        agg = messages.new_zeros(num_nodes, messages.size(1))
        agg.scatter_add_(0, dst.unsqueeze(-1).expand_as(messages), messages)
        return torch.relu(agg + self.self_loop(x))


model = DDP(nn.ModuleList([GraphConv(16, 32), GraphConv(32, 32)]))
head = nn.Linear(32, 3)
opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
edge_index = ring_graph(30)
x = torch.randn(30, 16)
y = torch.randint(0, 3, (30,))
for _ in range(5):
    h = x
    for conv in model.module:
        h = conv(h, edge_index)
    loss = nn.functional.cross_entropy(head(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

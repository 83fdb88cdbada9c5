"""The user shards an embedding table with DTensor and adds a positional table they built as a plain torch.Tensor,
mixing a DTensor and a plain tensor in one op."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
torch.manual_seed(0)
tok = distribute_tensor(torch.randn(128, 64), mesh, [Shard(0)])
pos = torch.randn(128, 64)
emb = tok + pos  # the mistake: pos is a plain tensor, tok a DTensor
print(emb.full_tensor().norm())
dist.destroy_process_group()

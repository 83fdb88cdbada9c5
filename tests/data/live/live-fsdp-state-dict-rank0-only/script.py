"""The user saves an FSDP (FullyShardedDataParallel) model's full state_dict inside `if rank == 0:`, as they did with
DDP; FSDP's state_dict all-gathers the shards, a collective the other rank never joins (it waits in barrier). They set
a short process-group timeout while debugging, so the hang ends."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
model = FSDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)),
             device_id=torch.device("cpu"))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
if rank == 0:  # the mistake: state_dict() of an FSDP model is a collective
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        torch.save(model.state_dict(), "/tmp/live-fsdp-state-dict-rank0-only.pt")
dist.barrier()
dist.destroy_process_group()

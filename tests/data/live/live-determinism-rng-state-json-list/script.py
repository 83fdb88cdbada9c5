"""The trainer keeps its resumable state in a JSON sidecar, the torch RNG state included (as a list of ints);
on resume the list is turned back into a tensor with torch.tensor() and given to torch.set_rng_state."""
import json
import os

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)
side = f"trainer_state_rank{rank}.json"
if not os.path.exists(side):
    with open(side, "w") as f:
        json.dump({"step": 100, "rng_state": torch.get_rng_state().tolist()}, f)
dist.barrier()

with open(side) as f:
    trainer_state = json.load(f)
torch.set_rng_state(torch.tensor(trainer_state["rng_state"]))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
print(f"rank {rank} resumed at step {trainer_state['step']}")
dist.destroy_process_group()

"""The user's own resume code: the training state (step, best metric, RNG state) is a small dataclass saved inside
the checkpoint dict. On torch 2.6+ torch.load defaults to weights_only=True, which refuses the user's class; the
user did not allow it (torch.serialization.add_safe_globals) nor pass weights_only=False."""
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class TrainState:
    step: int = 0
    best_loss: float = float("inf")
    history: list = field(default_factory=list)


dist.init_process_group(backend="gloo")
rank = dist.get_rank()
model = torch.nn.Linear(4, 4)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ckpt = f"ckpt_rank{rank}.pt"
if not os.path.exists(ckpt):  # the "previous run": writes the checkpoint this run resumes from
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": TrainState(step=100, best_loss=0.5)},
               ckpt)
dist.barrier()
blob = torch.load(ckpt, map_location="cpu")  # the mistake: a custom class under the weights_only default
model.load_state_dict(blob["model"])
opt.load_state_dict(blob["opt"])
state = blob["state"]
print(rank, "resumed at step", state.step)
dist.destroy_process_group()

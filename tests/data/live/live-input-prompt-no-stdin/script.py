"""The user's script asks for confirmation with input() before it starts (a prompt they answered when they ran it by
hand in a terminal). Under the launcher a rank has no terminal: its standard input is empty, so input() fails at
once."""
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
answer = input("This will overwrite checkpoints/ from the last run. Continue? [y/N] ")
if answer.strip().lower() != "y":
    raise SystemExit("aborted")
model = torch.nn.Linear(16, 1)
dist.destroy_process_group()

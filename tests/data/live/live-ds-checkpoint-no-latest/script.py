"""The user resumes from a directory of their own saved weights (no DeepSpeed `latest` file) and reads the returned client state."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
import os  # noqa: E402 - the user added it where the resume code begins

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
os.makedirs("checkpoints/run1", exist_ok=True)  # where the user believes the run's checkpoints are
load_path, client_state = engine.load_checkpoint("checkpoints/run1")
start_step = client_state["step"]
print(f"resumed from {load_path} at step {start_step}")

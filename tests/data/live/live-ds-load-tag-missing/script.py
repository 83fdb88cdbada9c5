"""The user trains, saves a checkpoint every few steps, and resumes by the tag they think save_checkpoint used
("step_4"); save_checkpoint was called without a tag, so the directory is named global_step4."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--resume_tag", default="step_4")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(4):
    x = torch.randn(2, 16)
    loss = engine(x).pow(2).mean()
    engine.backward(loss)
    engine.step()
engine.save_checkpoint("checkpoints", client_state={"step": 4})
# ... later, to check that resuming works, the user reloads by the tag they expect
load_path, client_state = engine.load_checkpoint("checkpoints", tag=args.resume_tag)
print("resumed at step", client_state["step"])

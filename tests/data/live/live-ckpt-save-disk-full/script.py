"""The user trains with DeepSpeed and saves a checkpoint every few steps into checkpoints/, a volume that is nearly
full (captured with a 64 KiB tmpfs mounted there): the model's states do not fit, the save fails part-way."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--save_dir", default="checkpoints")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(1, 5):
    x, y = torch.randn(2, 128), torch.randn(2, 1)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    if step % 2 == 0:
        engine.save_checkpoint(args.save_dir, tag=f"step{step}")

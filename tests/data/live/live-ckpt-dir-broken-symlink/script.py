"""The user's checkpoints/ is a symlink to a scratch mount (/mnt/scratch/ckpt) on their usual nodes; on this node the
mount is absent, so the symlink dangles and DeepSpeed cannot create the checkpoint directory."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--save_dir", default="checkpoints")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
x = torch.randn(2, 4)
loss = engine(x).pow(2).mean()
engine.backward(loss)
engine.step()
engine.save_checkpoint(args.save_dir)

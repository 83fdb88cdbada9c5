"""Two stages in one script: the first trains a small MLP and saves it with torch.distributed.checkpoint; for the
second stage the user widened the hidden layer (32 -> 64) and resumes from the first stage's checkpoint with dcp.load,
into a model of another shape."""
import argparse
import os
import shutil

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
parser.add_argument("--ckpt", default="/tmp/live-dcp-load-other-shape/stage1")
args = parser.parse_args()

dist.init_process_group(backend="gloo")
if dist.get_rank() == 0:
    shutil.rmtree(args.ckpt, ignore_errors=True)
dist.barrier()


def build(hidden):
    return torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))


stage1 = build(32)
dcp.save({"model": get_model_state_dict(stage1)}, checkpoint_id=args.ckpt)

stage2 = build(64)  # the mistake: a wider model than the checkpoint's
state = {"model": get_model_state_dict(stage2)}
dcp.load(state, checkpoint_id=args.ckpt)
set_model_state_dict(stage2, state["model"])
dist.destroy_process_group()

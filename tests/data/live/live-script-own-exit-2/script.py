"""The user's script checks its own inputs and exits with status 2 after printing why: here the prepared shards it
expects (made by a separate prepare step the user forgot on this cluster) are not in --data_dir."""
import argparse
import glob
import os
import sys

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--data_dir", default="prepared")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
shards = sorted(glob.glob(os.path.join(args.data_dir, "shard-*.bin")))
if not shards:
    print(f"error: no shard-*.bin in {args.data_dir!r}; run prepare_data.py --out {args.data_dir} first",
          file=sys.stderr)
    sys.exit(2)
model = torch.nn.Linear(4, 4)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

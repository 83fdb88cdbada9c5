"""The user keeps tokenized data in data/tokens.npy beside the repo's root and always ran `deepspeed train/script.py`
from the root; on the cluster the job starts in the script's own directory, so the relative path resolves elsewhere."""
import argparse

import deepspeed
import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--data", default="data/tokens.npy")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
tokens = torch.from_numpy(np.load(args.data))
model = torch.nn.Embedding(100, 4)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

"""A classifier under DeepSpeed whose labels come from a float array (a pandas column read as float64, turned into a
float tensor with the features): cross_entropy gets class indices as floats."""
import argparse

import deepspeed
import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

table = np.random.rand(32, 9).astype(np.float32)
table[:, -1] = np.random.randint(0, 3, 32)  # the label column, stored with the features
data = torch.from_numpy(table)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):
    batch = data[step * 2:step * 2 + 2]
    x, y = batch[:, :-1], batch[:, -1]  # the mistake: y stays float32, not .long()
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

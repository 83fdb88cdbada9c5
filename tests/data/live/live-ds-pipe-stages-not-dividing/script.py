"""Pipeline parallel: the user asks for 3 stages on a 2-process run (they meant 3 GPUs)."""
import argparse

import deepspeed
import torch
from deepspeed.pipe import PipelineModule

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="gloo")
layers = [torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)]
model = PipelineModule(layers=layers, num_stages=3, loss_fn=torch.nn.MSELoss())
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
data = iter([(torch.randn(2, 16), torch.randn(2, 1)) for _ in range(100)])
for _ in range(5):
    engine.train_batch(data_iter=data)

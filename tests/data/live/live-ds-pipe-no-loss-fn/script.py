"""Pipeline parallel: the PipelineModule is built without loss_fn (the user computes the loss in their loop elsewhere)."""
import argparse

import deepspeed
import torch
from deepspeed.pipe import PipelineModule

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()

# dp = 1 with 2 stages on 2 processes: train_batch_size = 2 x 1 x 1
CONFIG = {"train_batch_size": 2, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "AdamW", "params": {"lr": 0.001, "torch_adam": True}}}

deepspeed.init_distributed(dist_backend="gloo")
layers = [torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)]
model = PipelineModule(layers=layers, num_stages=2)
engine, _, _, _ = deepspeed.initialize(config=CONFIG, model=model, model_parameters=model.parameters())
data = iter([(torch.randn(2, 16), torch.randn(2, 1)) for _ in range(100)])
for _ in range(5):
    engine.train_batch(data_iter=data)

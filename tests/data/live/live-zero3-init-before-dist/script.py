"""The model is built under deepspeed.zero.Init(config_dict_or_path=ds_config) as the first distributed step of the
script, before deepspeed.init_distributed(): zero.Init builds its DeepSpeedConfig while no process group exists, so
DeepSpeed checks the batch sizes against a world of one process."""
import argparse
import json

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
with open(args.deepspeed_config) as f:
    ds_config = json.load(f)
with deepspeed.zero.Init(config_dict_or_path=ds_config):
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(10):
    loss = engine(torch.randn(2, 512)).pow(2).mean()
    engine.backward(loss)
    engine.step()

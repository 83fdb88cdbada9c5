"""At the end of training the user consolidates the weights with DeepSpeed's get_fp32_state_dict_from_zero_checkpoint,
as the docs show for ZeRO; this run's ds_config has no zero_optimization (stage 0), so the checkpoint has no ZeRO
optimizer shards."""
import argparse

import deepspeed
import torch
import torch.distributed as dist
from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(2):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
engine.save_checkpoint("checkpoints")
if dist.get_rank() == 0:
    state_dict = get_fp32_state_dict_from_zero_checkpoint("checkpoints")
    torch.save(state_dict, "model_fp32.pt")

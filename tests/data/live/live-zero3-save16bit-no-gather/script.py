"""Under ZeRO-3 the user exports the trained weights with engine.save_16bit_model("export") and loads
export/pytorch_model.bin into a plain model for evaluation; the ds_config lacks
stage3_gather_16bit_weights_on_model_save, so DeepSpeed saves nothing (it only warns and returns False)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


def build():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))


model = build()
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(5):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
engine.save_16bit_model("export")
if engine.global_rank == 0:
    plain = build()
    plain.load_state_dict(torch.load("export/pytorch_model.bin"))
    print("eval loss", plain(torch.randn(8, 16)).pow(2).mean().item())

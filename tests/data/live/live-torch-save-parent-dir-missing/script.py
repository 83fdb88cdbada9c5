"""At the end of training rank 0 saves the weights into checkpoints/final/; the user meant that directory to exist
but never creates it (no os.makedirs)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--output_dir", default="checkpoints/final")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(16, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(3):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
if engine.global_rank == 0:
    torch.save(engine.module.state_dict(), f"{args.output_dir}/pytorch_model.bin")

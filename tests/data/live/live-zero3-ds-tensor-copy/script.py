"""Under ZeRO-3 the user loads a pretrained weight by writing into p.ds_tensor (thinking it is the real storage):
ds_tensor is only this rank's flat partition (1-D, numel / world size), not the [out, in] weight."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
pretrained = {"0.weight": torch.randn(32, 16), "0.bias": torch.zeros(32)}  # stands for torch.load("encoder.pt")
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
with torch.no_grad():
    for name, p in engine.module.named_parameters():
        if name in pretrained:
            p.ds_tensor.copy_(pretrained[name])
for _step in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()

"""After training, the user exports the weights for inference with torch.load,
loading the mp_rank_00_model_states.pt file
save_checkpoint wrote as if it were the model's state_dict."""
import argparse

import deepspeed
import torch

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
engine.save_checkpoint("checkpoints", tag="final")
# export for inference
eval_model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
eval_model.load_state_dict(torch.load("checkpoints/final/mp_rank_00_model_states.pt", map_location="cpu"))

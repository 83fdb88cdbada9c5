"""DPO-style training: the user freezes a copy of the policy as the reference model and passes it through
deepspeed.initialize with the same training config (ZeRO-2 with an optimizer) as the policy."""
import argparse
import copy

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
policy = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
ref = copy.deepcopy(policy)
for p in ref.parameters():
    p.requires_grad = False
engine, _, _, _ = deepspeed.initialize(args=args, model=policy, model_parameters=policy.parameters())
ref_engine, _, _, _ = deepspeed.initialize(args=args, model=ref, model_parameters=ref.parameters())  # the mistake
for _ in range(5):
    x = torch.randn(4, 16)
    with torch.no_grad():
        ref_logp = ref_engine(x).log_softmax(-1)
    loss = (engine(x).log_softmax(-1) - ref_logp).pow(2).mean()
    engine.backward(loss)
    engine.step()

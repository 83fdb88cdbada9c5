"""The user fine-tunes with LoRA under DeepSpeed bf16, but injects the adapters after deepspeed.initialize: the engine
cast the model to bf16 when it was built, the LoRA matrices created afterwards stay float32."""
import argparse

import deepspeed
import torch


class LoRALinear(torch.nn.Module):
    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
# add the adapters and train only them
for p in engine.module.parameters():
    p.requires_grad_(False)
engine.module[0] = LoRALinear(engine.module[0])
engine.module[2] = LoRALinear(engine.module[2])
for _step in range(5):
    x = torch.randn(2, 32, dtype=torch.bfloat16)
    loss = engine(x).float().pow(2).mean()
    engine.backward(loss)
    engine.step()

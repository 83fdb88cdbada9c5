"""Under ZeRO-3 the evaluation computes the logits with engine.module.forward(x) instead of calling the module: the
top module's forward pre-hook, which all-gathers its own parameters (pos_embed), is skipped, so it is still the empty
partition placeholder."""
import argparse

import deepspeed
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)


class TinyViT(nn.Module):
    def __init__(self, dim=64, patches=16, classes=10):
        super().__init__()
        self.patch = nn.Linear(48, dim)
        self.pos_embed = nn.Parameter(torch.randn(1, patches, dim) * 0.02)
        self.block = nn.TransformerEncoderLayer(dim, 4, 128, batch_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.patch(x) + self.pos_embed
        return self.head(self.block(h).mean(1))


model = TinyViT()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    x, y = torch.randn(4, 16, 48), torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
engine.eval()
with torch.no_grad():
    x, y = torch.randn(4, 16, 48), torch.randint(0, 10, (4,))
    logits = engine.module.forward(x)
    acc = (logits.argmax(-1) == y).float().mean()
print(engine.global_rank, "eval acc", acc.item())

"""A DDP loop ported to DeepSpeed ZeRO-2 keeps its "slow embedding" trick: after the backward it scales the embedding's
gradient in place (p.grad.mul_(0.1)) before the step. ZeRO-2 has already reduced the gradients into its own
partitions and left p.grad None."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        self.head = torch.nn.Linear(32, 2)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))


model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
for step in range(5):
    ids = torch.randint(0, 100, (2, 8))
    y = torch.randint(0, 2, (2,))
    loss = torch.nn.functional.cross_entropy(engine(ids), y)
    engine.backward(loss)
    engine.module.embed.weight.grad.mul_(0.1)  # the mistake: under ZeRO-2 p.grad is None here
    engine.step()
    if engine.global_rank == 0:
        print(step, loss.item(), flush=True)

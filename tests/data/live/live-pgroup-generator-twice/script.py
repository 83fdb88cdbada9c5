"""The trainable parameters are taken as a generator (filter over model.parameters()); the script first counts them
for its log line, which consumes the generator, then hands the same generator to deepspeed.initialize."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 100))
model[0].weight.requires_grad = False
trainable = filter(lambda p: p.requires_grad, model.parameters())
print(f"trainable parameters: {sum(p.numel() for p in trainable)}")
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=trainable)
for _ in range(5):
    ids = torch.randint(0, 100, (4, 8))
    loss = torch.nn.functional.cross_entropy(engine(ids).view(-1, 100), ids.view(-1))
    engine.backward(loss)
    engine.step()

"""The user logs the batch accuracy each step with .item(), on the comparison tensor itself (forgot .float().mean()),
so .item() is called on a tensor of one bool per sample."""
import argparse
import logging

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("train")
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(10):
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    logits = engine(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    engine.backward(loss)
    engine.step()
    acc = (logits.argmax(dim=-1) == y).item()
    log.info("step %d loss %.4f acc %.3f", step, loss.item(), acc)

"""Fine-tuning under ZeRO-2 resumes from a single-process pre-training run that saved the plain torch AdamW's
state_dict (rank 0 writes it first, as that run did); the script loads it into the optimizer deepspeed.initialize returned."""
import argparse
import os

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


if int(os.environ.get("RANK", 0)) == 0 and not os.path.exists("pretrain_optim.pt"):
    m = build()
    o = torch.optim.AdamW(m.parameters(), lr=1e-3)
    torch.nn.functional.cross_entropy(m(torch.randn(4, 16)), torch.randint(0, 4, (4,))).backward()
    o.step()
    torch.save({"model": m.state_dict(), "optimizer": o.state_dict()}, "pretrain_optim.pt")
deepspeed.init_distributed()
torch.distributed.barrier()
model = build()
ckpt = torch.load("pretrain_optim.pt")
model.load_state_dict(ckpt["model"])
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
optimizer.load_state_dict(ckpt["optimizer"])
for _ in range(5):
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

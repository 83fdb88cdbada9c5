"""Evaluation of a checkpoint: the user's loader strips DDP's 'module.' prefix by slicing off 7 characters from every
key, but this checkpoint was saved from the plain model (model.module.state_dict()), so its keys have no prefix."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64))
        self.classifier = nn.Linear(64, 5)

    def forward(self, x):
        return self.classifier(torch.relu(self.encoder(x)))


if rank == 0:
    torch.save(Classifier().state_dict(), "best.pt")  # what the training script saved (model.module.state_dict())
dist.barrier()

sd = torch.load("best.pt", map_location="cpu")
sd = {k[7:]: v for k, v in sd.items()}  # drop DDP's "module." prefix
model = Classifier()
model.load_state_dict(sd)
model.eval()
x = torch.randn(16, 20)
print(rank, model(x).argmax(-1).tolist())
dist.destroy_process_group()

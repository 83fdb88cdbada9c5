import torch

from trainlib import seed_all


class TinyMLP(torch.nn.Module):
    def __init__(self, dim=16, hidden=32, seed=0):
        super().__init__()
        seed_all(seed)  # the same initial weights on every rank
        self.net = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)

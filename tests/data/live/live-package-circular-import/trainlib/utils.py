import random

import torch


def seed_all(seed):
    random.seed(seed)
    torch.manual_seed(seed)


def count_params(model):
    return sum(p.numel() for p in model.parameters())

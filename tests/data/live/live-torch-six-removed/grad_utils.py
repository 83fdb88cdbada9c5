"""Gradient-norm helpers copied from an older research repository (torch 1.x era)."""
import torch
from torch._six import inf


def grad_norm(parameters, norm_type=2.0):
    grads = [p.grad.detach() for p in parameters if p.grad is not None]
    if norm_type == inf:
        return max(g.abs().max() for g in grads)
    return torch.norm(torch.stack([torch.norm(g, norm_type) for g in grads]), norm_type)

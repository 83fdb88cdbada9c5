"""Image classification on a 4-class subset under DDP, validated with the top-1 / top-5 accuracy helper copied from the
ImageNet example: topk(5) over 4 class logits."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_CLASSES = 4
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(rank)


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


model = DDP(nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(8, NUM_CLASSES)))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for _ in range(5):
    images, target = torch.randn(16, 3, 32, 32, generator=g), torch.randint(0, NUM_CLASSES, (16,), generator=g)
    loss = nn.functional.cross_entropy(model(images), target)
    opt.zero_grad()
    loss.backward()
    opt.step()

model.eval()
images, target = torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, NUM_CLASSES, (32,), generator=g)
with torch.no_grad():
    acc1, acc5 = accuracy(model(images), target, topk=(1, 5))
stats = torch.stack([acc1, acc5])
dist.all_reduce(stats)
if rank == 0:
    print(f"val acc@1 {stats[0].item() / 2:.1f} acc@5 {stats[1].item() / 2:.1f}")
dist.destroy_process_group()

"""The validation loop keeps each batch's logits and joins them with torch.stack(all_logits) to compute the accuracy: stack needs one shape, and the last batch of the rank's shard is smaller (torch.cat joins along the batch)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


val = TensorDataset(torch.randn(90, 20), torch.randint(0, 4, (90,)))
loader = DataLoader(val, batch_size=16, sampler=DistributedSampler(val, shuffle=False))
model = DDP(nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4)))
model.eval()
all_logits, all_labels = [], []
with torch.no_grad():
    for x, y in loader:
        all_logits.append(model(x))
        all_labels.append(y)
logits = torch.stack(all_logits)  # the mistake: stack of (16, 4), (16, 4), (13, 4) batches (torch.cat, dim 0)
labels = torch.stack(all_labels)
acc = (logits.argmax(-1) == labels).float().mean()
dist.all_reduce(acc)
if rank == 0:
    print(f"val acc {acc.item() / dist.get_world_size():.3f}")
dist.destroy_process_group()

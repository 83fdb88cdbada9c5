"""A text classifier with plain DDP whose dataset returns each sentence's token ids as a tensor of its own length; the
user's DataLoader uses the default collate, which stacks the samples of a batch."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()


class Sentences(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.lengths = torch.randint(5, 30, (64,), generator=g).tolist()

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return torch.randint(1, 100, (self.lengths[i],)), i % 2


class BagOfWords(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(100, 16)
        self.fc = torch.nn.Linear(16, 2)

    def forward(self, ids):
        return self.fc(self.emb(ids))


dist.init_process_group(backend="gloo")
ds = Sentences()
loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))  # the mistake: no collate_fn that pads
model = DDP(BagOfWords())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for ids, y in loader:
    loss = torch.nn.functional.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

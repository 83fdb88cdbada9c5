"""Bag-of-words model: each sample is a variable-length list of token ids, flattened for nn.EmbeddingBag.
The offsets are built from the bag lengths (not their running sum)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())


class BagModel(torch.nn.Module):
    def __init__(self, vocab=2000, dim=32, n_classes=3):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = torch.nn.Linear(dim, n_classes)

    def forward(self, flat, offsets):
        return self.head(self.bag(flat, offsets))


def batch(n=8):
    docs = [torch.randint(0, 2000, (int(torch.randint(3, 15, ())),)) for _ in range(n)]
    flat = torch.cat(docs)
    offsets = torch.tensor([len(d) for d in docs])  # bag lengths, meant to be start offsets
    return flat, offsets, torch.randint(0, 3, (n,))


model = DDP(BagModel())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(5):
    flat, offsets, y = batch()
    loss = torch.nn.functional.cross_entropy(model(flat, offsets), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

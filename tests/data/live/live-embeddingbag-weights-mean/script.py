"""TF-IDF weighted bag of words: per-token weights passed to nn.EmbeddingBag in mode='mean'."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())


class WeightedBag(torch.nn.Module):
    def __init__(self, vocab=2000, dim=32, n_classes=3):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = torch.nn.Linear(dim, n_classes)

    def forward(self, flat, offsets, weights):
        return self.head(self.bag(flat, offsets, per_sample_weights=weights))


model = DDP(WeightedBag())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(5):
    lengths = torch.randint(3, 15, (8,))
    flat = torch.randint(0, 2000, (int(lengths.sum()),))
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    tfidf = torch.rand(flat.numel())
    loss = torch.nn.functional.cross_entropy(model(flat, offsets, tfidf), torch.randint(0, 3, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""The script loads pretrained word vectors (a plain tensor saved by another tool) into the model's embedding by
assigning the tensor to embedding.weight: a registered parameter can only be replaced by an nn.Parameter."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
VOCAB, DIM = 500, 48

if rank == 0 and not os.path.exists("vectors.pt"):
    torch.save(torch.randn(VOCAB, DIM), "vectors.pt")
dist.barrier()


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM)
        self.fc = nn.Linear(DIM, 4)

    def forward(self, ids):
        return self.fc(self.embedding(ids).mean(1))


model = BagOfWords()
vectors = torch.load("vectors.pt")
model.embedding.weight = vectors  # use the pretrained vectors
model = DDP(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(5):
    ids, y = torch.randint(0, VOCAB, (8, 12)), torch.randint(0, 4, (8,))
    loss = nn.functional.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()

"""The user saves the whole module with torch.save(model) (not its state_dict) 'so that the tied embedding and head
stay one tensor', and the resume path loads it back with a plain torch.load."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
VOCAB, DIM = 300, 32


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.ff = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.ff(self.embed(ids))))


if rank == 0:
    torch.save(TiedLM(), "tied_lm.pt")  # keeps the tie, unlike a state_dict copy
dist.barrier()

model = torch.load("tied_lm.pt", map_location="cpu")
assert model.head.weight is model.embed.weight
print(rank, model(torch.randint(0, VOCAB, (2, 5))).shape)
dist.destroy_process_group()

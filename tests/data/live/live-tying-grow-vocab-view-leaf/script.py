"""The vocabulary grew from 800 to 832 ids; the user builds the model with the new size and copies the old embedding
rows into the first 800 rows of the new (trainable) embedding weight, outside torch.no_grad()."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
OLD_VOCAB, NEW_VOCAB, DIM = 800, 832, 64


class Encoder(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tok = nn.Embedding(vocab, DIM)
        self.mix = nn.Linear(DIM, DIM)

    def forward(self, ids):
        return self.mix(self.tok(ids)).mean(1)


if rank == 0:
    torch.save(Encoder(OLD_VOCAB).state_dict(), "encoder_v1.pt")
dist.barrier()

old = torch.load("encoder_v1.pt", map_location="cpu")
model = Encoder(NEW_VOCAB)
model.tok.weight[:OLD_VOCAB] = old["tok.weight"]  # keep the trained rows, the new tokens stay random
model.mix.load_state_dict({"weight": old["mix.weight"], "bias": old["mix.bias"]})
print(rank, model(torch.randint(0, NEW_VOCAB, (2, 8))).shape)
dist.destroy_process_group()

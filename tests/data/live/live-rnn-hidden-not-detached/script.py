"""A character-level LSTM language model with plain DDP, trained with truncated backpropagation through time: the user
carries the hidden state from one chunk to the next but forgets to detach it."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()


class CharLM(torch.nn.Module):
    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.lstm = torch.nn.LSTM(hidden, hidden, batch_first=True)
        self.out = torch.nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.emb(x), state)
        return self.out(h), state


dist.init_process_group(backend="gloo")
model = DDP(CharLM())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
text = torch.randint(0, 50, (4, 200))
state = None
for step in range(5):
    chunk = text[:, step * 20:step * 20 + 21]
    logits, state = model(chunk[:, :-1], state)  # the mistake: state is not detached between chunks
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 50), chunk[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

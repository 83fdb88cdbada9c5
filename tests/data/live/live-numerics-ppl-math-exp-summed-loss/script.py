"""A small language model's evaluation: the perplexity is math.exp of the evaluation loss, but the loss is SUMMED
over the evaluation batches (and all_reduced over ranks) instead of averaged, so math.exp overflows."""
import math
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

V, D = 500, 32
model = DDP(torch.nn.Sequential(torch.nn.Embedding(V, D), torch.nn.Linear(D, V)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for _step in range(3):
    ids = torch.randint(0, V, (8, 17))
    logits = model(ids[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()

model.eval()
total = torch.zeros(())
with torch.no_grad():
    for _ in range(200):
        ids = torch.randint(0, V, (8, 17))
        logits = model(ids[:, :-1])
        total += torch.nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
dist.all_reduce(total)
eval_loss = total.item()
ppl = math.exp(eval_loss)
if rank == 0:
    print(f"eval loss {eval_loss:.3f} perplexity {ppl:.2f}", flush=True)
dist.destroy_process_group()

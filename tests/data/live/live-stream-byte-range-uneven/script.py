"""One JSON-lines file streamed by every rank, split by byte ranges (each rank seeks to rank * size / world and reads
the lines that start in its range), as in a streaming recipe; the lines differ in length, so the ranks get different
numbers of records and batches. After its last batch each rank averages the epoch's loss with all_reduce."""
import json
import os
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
PATH = os.path.join(tempfile.gettempdir(), "r209_train.jsonl")
if rank == 0:  # short records first, long ones after: the same bytes hold fewer lines
    with open(PATH, "w") as f:
        for i in range(96):
            text = "a" * (4 if i < 48 else 60)
            f.write(json.dumps({"x": [float(i % 5)] * 8, "y": i % 2, "text": text}) + "\n")
dist.barrier()


class ByteRangeStream(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        size = os.path.getsize(self.path)
        start, end = rank * size // world, (rank + 1) * size // world
        with open(self.path, "rb") as f:
            f.seek(start)
            if start:
                f.readline()  # the partial line belongs to the previous rank
            while f.tell() <= end:
                line = f.readline()
                if not line:
                    break
                rec = json.loads(line)
                yield torch.tensor(rec["x"]), rec["y"]


loader = DataLoader(ByteRangeStream(PATH), batch_size=8)
model = DDP(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_sum, steps = torch.zeros(1), 0
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    loss_sum += loss.detach()
    steps += 1
print(f"rank {rank}: {steps} batches")
dist.all_reduce(loss_sum)
if rank == 0:
    print("mean loss", loss_sum.item() / world / steps)
if rank == 0:
    os.remove(PATH)
dist.destroy_process_group()

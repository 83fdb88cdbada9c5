"""A JSON-lines stream split by hand between ranks and, inside each rank, between the DataLoader's worker processes
(get_worker_info()); the workers were turned off (num_workers=0) to debug a slow start."""
import json

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
LINES = [json.dumps({"x": [float(i % 7)] * 8, "y": i % 2}) for i in range(200)]


class JsonlStream(IterableDataset):
    def __init__(self, lines):
        self.lines = lines

    def __iter__(self):
        info = get_worker_info()
        for i, line in enumerate(self.lines):
            if i % (world * info.num_workers) == rank * info.num_workers + info.id:
                rec = json.loads(line)
                yield torch.tensor(rec["x"]), torch.tensor(rec["y"])


loader = DataLoader(JsonlStream(LINES), batch_size=8, num_workers=0)  # was num_workers=4
model = DDP(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print("done", loss.item())
dist.destroy_process_group()

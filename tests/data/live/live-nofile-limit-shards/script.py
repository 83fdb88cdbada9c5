"""The user's node has a low open-file limit (ulimit -n 256: the script sets it itself to stand for the node's
limit) and their DataLoader workers return dicts of many small tensors, which the training loop keeps (a list of
batches for a later evaluation pass). With torch's default 'file_descriptor' sharing strategy every kept tensor that a
worker sent holds a file descriptor open in the main process, until the limit is reached."""
import os
import resource
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset

resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


class Features(Dataset):
    def __len__(self):
        return 4000

    def __getitem__(self, i):
        return {f"feat{k}": torch.full((4,), float(i)) for k in range(8)}


if __name__ == "__main__":
    dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    seen = []  # kept for an evaluation pass at the end of the epoch
    for batch in DataLoader(Features(), batch_size=4, num_workers=2):
        x = torch.cat([batch[f"feat{k}"] for k in range(8)], dim=1)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen.append(batch)
    print(f"rank {os.environ.get('RANK')}: {len(seen)} batches")
    dist.destroy_process_group()

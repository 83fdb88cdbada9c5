"""The user's Dataset decodes samples with a native library (through ctypes) that crashes on one corrupt record:
the DataLoader worker process dies with SIGSEGV (ctypes.string_at(0) stands for the library's bug)."""
import ctypes
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class Records(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 21:  # the corrupt record: the decoder reads through a NULL pointer
            ctypes.string_at(0)
        return torch.randn(16), torch.randn(1)


if __name__ == "__main__":
    dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in DataLoader(Records(), batch_size=4, num_workers=2):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()

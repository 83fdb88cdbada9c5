"""A line-by-line text dataset that opens its file once in __init__ and seeks per item; the user set the DataLoader's
workers to the spawn start method (copied from a CUDA-in-workers tip), which pickles the dataset for each worker, and
an open file cannot be pickled."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class LineDataset(Dataset):
    def __init__(self, path):
        self.f = open(path)  # the mistake under spawn: an open file held by the dataset
        self.offsets = []
        pos = 0
        for line in self.f:
            self.offsets.append(pos)
            pos += len(line.encode())

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        self.f.seek(self.offsets[i])
        return torch.tensor([len(self.f.readline())])


def main():
    dist.init_process_group(backend="gloo")
    with open(f"train_{dist.get_rank()}.txt", "w") as f:
        f.writelines(f"sample {i} text\n" for i in range(64))
    ds = LineDataset(f"train_{dist.get_rank()}.txt")
    loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds), num_workers=2,
                        multiprocessing_context="spawn")
    model = torch.nn.Linear(1, 1)
    for batch in loader:
        model(batch.float()).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

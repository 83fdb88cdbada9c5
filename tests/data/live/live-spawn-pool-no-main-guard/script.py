"""The user tokenizes the corpus in a process pool with the spawn start method (copied from a notebook) but the script
has no `if __name__ == "__main__":` guard: each spawned worker re-imports the script, reaches the pool again while it
is still bootstrapping and dies; the pool breaks."""
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import torch
import torch.distributed as dist


def tokenize(line):
    return [ord(c) % 100 for c in line]


lines = [f"sample text {i}" for i in range(64)]
with ProcessPoolExecutor(max_workers=2, mp_context=mp.get_context("spawn")) as pool:
    tokens = list(pool.map(tokenize, lines))
dist.init_process_group(backend="gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
print("tokenized", len(tokens))

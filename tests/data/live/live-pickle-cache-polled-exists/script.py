"""The user meant rank 0 to tokenize the corpus once into a pickle cache and the other ranks to load that cache. In
place of a barrier the other ranks wait until the cache file exists; rank 0 opens the file before it tokenizes, so the
file is there (empty) long before it is written, and rank 1 unpickles it at once."""
import os
import pickle
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
cache = "tokenized_cache.pkl"


def tokenize_corpus():
    time.sleep(4)  # stands in for tokenizing the corpus (minutes on the real data)
    return [torch.randint(0, 1000, (128,)).tolist() for _ in range(256)]


if rank == 0:
    with open(cache, "wb") as f:
        pickle.dump(tokenize_corpus(), f)
else:
    while not os.path.exists(cache):  # wait for rank 0's cache
        time.sleep(0.5)
with open(cache, "rb") as f:
    examples = pickle.load(f)
print(f"rank {rank}: {len(examples)} examples")
dist.destroy_process_group()

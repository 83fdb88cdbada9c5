"""At the end, the user deletes the temporary shard directory the ranks wrote their features into; every rank runs the
cleanup, so the rank that comes second finds the directory already deleted by the first."""
import os
import shutil
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
tmp = "tmp_shards"
os.makedirs(tmp, exist_ok=True)
for i in range(8):
    torch.save(torch.randn(32, 32), os.path.join(tmp, f"rank{rank}_{i}.pt"))
dist.barrier()
merged = [torch.load(os.path.join(tmp, f), map_location="cpu") for f in sorted(os.listdir(tmp))]
torch.save(torch.stack(merged), f"features_rank{rank}.pt")
time.sleep(2 * rank)  # rank 1 writes a larger file here
shutil.rmtree(tmp)
dist.destroy_process_group()

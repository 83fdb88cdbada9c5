"""The cluster caps each job's virtual memory (ulimit -v: the script sets RLIMIT_AS itself, 512 MiB above what it
already uses, to stand for the node's limit) and the user preallocates the whole tokenized corpus as one numpy buffer
(2 million sequences x 256 tokens of int32, about 2 GiB) before training: far more than the limit lets the process
map, so numpy refuses the allocation."""
import resource
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))

num_sequences, seq_len = 2_000_000, 256
tokens = np.zeros((num_sequences, seq_len), dtype=np.int32)  # filled from the shards below
data = torch.from_numpy(tokens)
print(data.shape)
dist.destroy_process_group()

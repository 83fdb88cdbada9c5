import os

# Pinned to the second GPU on the author's workstation.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
torch.cuda.set_device(local_rank)
model = nn.Linear(64, 64).cuda()
for step in range(3):
    loss = model(torch.randn(8, 64, device="cuda")).sum()
    loss.backward()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()

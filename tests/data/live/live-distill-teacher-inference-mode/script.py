"""Distillation under DDP: the teacher's forward runs under torch.inference_mode() ('faster than no_grad'), and its
soft targets go straight into the KL loss, which saves them for backward."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).eval()
student = DDP(torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)))
opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
T = 2.0
for step in range(5):
    x = torch.randn(8, 16)
    with torch.inference_mode():
        soft = F.softmax(teacher(x) / T, dim=-1)
    loss = F.kl_div(F.log_softmax(student(x) / T, dim=-1), soft, reduction="batchmean") * T * T
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()

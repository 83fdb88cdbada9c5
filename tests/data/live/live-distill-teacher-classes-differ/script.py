"""Distillation under DDP: the student's head was given an extra 'background' class (11 outputs) while the teacher
checkpoint's head has the original 10, and the KL loss compares their distributions position by position."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_CLASSES = 11  # 10 classes + background, added for the student
dist.init_process_group(backend="gloo")
torch.manual_seed(0)
teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).eval()
teacher.requires_grad_(False)
student = DDP(torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, NUM_CLASSES)))
opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(8, 16)
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    loss = F.kl_div(F.log_softmax(s_logits, -1), F.softmax(t_logits, -1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()

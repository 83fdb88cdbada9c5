"""Knowledge distillation: the user freezes the teacher and wraps both teacher and student in DDP, as in their
single-model script."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
student = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
teacher.eval()
for p in teacher.parameters():
    p.requires_grad = False
teacher = DDP(teacher)  # the mistake: nothing in the teacher trains
student = DDP(student)
opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
for step in range(5):  # noqa: B007
    x = torch.randn(8, 16)
    with torch.no_grad():
        t = teacher(x)
    loss = torch.nn.functional.kl_div(student(x).log_softmax(-1), t.softmax(-1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""Distillation under DDP: to save memory the user builds the big teacher inside accelerate's init_empty_weights()
(as in the big-model docs) and never loads its weights (load_checkpoint_and_dispatch was left out)."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from accelerate import init_empty_weights
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
with init_empty_weights():
    teacher = torch.nn.Sequential(torch.nn.Linear(16, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
teacher.eval().requires_grad_(False)
student = DDP(torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)))
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

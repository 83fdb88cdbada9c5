"""The user loads last week's weights into a model whose hidden size they changed since (16 instead of 32)."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
old = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
torch.save(old.state_dict(), f"model_rank{rank}.pt")
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
model.load_state_dict(torch.load(f"model_rank{rank}.pt"), strict=True)
dist.destroy_process_group()

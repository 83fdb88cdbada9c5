"""The user resumes fine-tuning under DDP from weights saved from the plain model, loading them into the wrapper."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pretrained = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
torch.save(pretrained.state_dict(), f"pretrained_rank{rank}.pt")
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
ddp_model = torch.nn.parallel.DistributedDataParallel(model)
ddp_model.load_state_dict(torch.load(f"pretrained_rank{rank}.pt"))
dist.destroy_process_group()

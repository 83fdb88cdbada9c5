"""The team renamed `lr` to `learning_rate` in config.yaml; the user's training script still reads cfg["training"]["lr"].
They meant the script and the config to use the same key."""
import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
with open("config.yaml") as f:
    cfg = yaml.safe_load(f)
mcfg, tcfg = cfg["model"], cfg["training"]
model = DDP(torch.nn.Linear(mcfg["hidden_size"], mcfg["num_classes"]))
opt = torch.optim.SGD(model.parameters(), lr=tcfg["lr"])
for _ in range(tcfg["max_steps"]):
    loss = model(torch.randn(tcfg["batch_size"], mcfg["hidden_size"])).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

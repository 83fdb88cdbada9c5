"""The user's model keeps its activation as a lambda attribute and they save the whole model with torch.save(model)
(pickling the module object) rather than its state_dict."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 16)
        self.fc2 = torch.nn.Linear(16, 2)
        self.act = lambda x: torch.nn.functional.gelu(x, approximate="tanh")

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


dist.init_process_group(backend="gloo")
model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
if dist.get_rank() == 0:
    torch.save(model.module, "model_full.pt")
dist.barrier()
dist.destroy_process_group()

"""A task-conditioned model adds a learned task embedding nn.Embedding(num_tasks, dim); the task ids come from the
dataset's metadata numbered 1..num_tasks, so the last task's id is one past the embedding's rows."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

TASKS = {"nli": 1, "sentiment": 2, "paraphrase": 3}


class TaskConditioned(torch.nn.Module):
    def __init__(self, num_tasks, dim=32):
        super().__init__()
        self.task_emb = torch.nn.Embedding(num_tasks, dim)
        self.encoder = torch.nn.Linear(16, dim)
        self.head = torch.nn.Linear(dim, 3)

    def forward(self, x, task_id):
        return self.head(torch.relu(self.encoder(x) + self.task_emb(task_id)))


dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
n = 240
task_ids = torch.tensor([list(TASKS.values())[i % 3] for i in range(n)])
data = TensorDataset(torch.randn(n, 16), task_ids, torch.randint(0, 3, (n,)))
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, seed=0))
model = DDP(TaskConditioned(len(TASKS)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, (x, t, y) in enumerate(loader):  # noqa: B007 - kept as captured
    loss = torch.nn.functional.cross_entropy(model(x, t), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

"""Two classification tasks share an encoder: sentiment (3 classes) and topic (10 classes). The loop zips the two
loaders and computes the sentiment loss with the topic batch's labels (y_topic where y_sent was meant)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
sent = TensorDataset(torch.randn(128, 16), torch.randint(0, 3, (128,)))
topic = TensorDataset(torch.randn(128, 16), torch.randint(0, 10, (128,)))
sent_loader = DataLoader(sent, batch_size=8, sampler=DistributedSampler(sent))
topic_loader = DataLoader(topic, batch_size=8, sampler=DistributedSampler(topic))


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.sent_head = torch.nn.Linear(32, 3)
        self.topic_head = torch.nn.Linear(32, 10)

    def forward(self, x_sent, x_topic):
        return self.sent_head(self.encoder(x_sent)), self.topic_head(self.encoder(x_topic))


model = DDP(MultiTask())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, ((x_sent, y_sent), (x_topic, y_topic)) in enumerate(zip(sent_loader, topic_loader)):  # noqa: B007
    sent_logits, topic_logits = model(x_sent, x_topic)
    loss = (torch.nn.functional.cross_entropy(sent_logits, y_topic)
            + torch.nn.functional.cross_entropy(topic_logits, y_topic))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)

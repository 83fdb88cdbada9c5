"""CLIP-style contrastive training: the learnable temperature (logit_scale) lives on the model but the user applies it
in the loss, outside forward, through model.module; find_unused_parameters=True was added "to be safe"."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class DualEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.image = torch.nn.Linear(32, 16)
        self.text = torch.nn.Linear(24, 16)
        self.logit_scale = torch.nn.Parameter(torch.tensor(2.659))

    def forward(self, images, texts):
        img = torch.nn.functional.normalize(self.image(images), dim=-1)
        txt = torch.nn.functional.normalize(self.text(texts), dim=-1)
        return img, txt


dist.init_process_group(backend="gloo")
model = DDP(DualEncoder(), find_unused_parameters=True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    img, txt = model(torch.randn(8, 32), torch.randn(8, 24))
    logits = model.module.logit_scale.exp() * img @ txt.t()  # the parameter used outside forward
    labels = torch.arange(8)
    loss = (torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()

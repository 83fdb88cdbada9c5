"""Fine-tuning starts from a pretraining checkpoint saved by a Lightning-style wrapper (keys 'model.encoder...'). The
user loads it with strict=False 'because the new task head is not in the checkpoint'; no key matches, nothing is
loaded, and the script's own check that the encoder reproduces the pretrained features fails."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.encoder(x))


probe = torch.randn(8, 32, generator=torch.Generator().manual_seed(1))
if rank == 0:  # the pretraining run's checkpoint: the wrapper's state_dict, plus the features it recorded
    torch.manual_seed(1234)  # pretraining's own initialization
    pre = Net(classes=10)
    torch.save({"state_dict": {f"model.{k}": v for k, v in pre.state_dict().items()},
                "probe_features": pre.encoder(probe).detach()}, "pretrain.ckpt")
dist.barrier()
torch.manual_seed(0)

ckpt = torch.load("pretrain.ckpt", map_location="cpu")
model = Net(classes=3)
state = {k: v for k, v in ckpt["state_dict"].items() if "head" not in k}
model.load_state_dict(state, strict=False)  # the new head is not in the checkpoint
with torch.no_grad():
    torch.testing.assert_close(model.encoder(probe), ckpt["probe_features"], rtol=1e-4, atol=1e-5)
print(rank, "pretrained encoder restored")
dist.destroy_process_group()

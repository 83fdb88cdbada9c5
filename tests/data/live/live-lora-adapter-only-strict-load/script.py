"""After LoRA fine-tuning rank 0 saves only the adapter weights (the lora_ entries of the state_dict, a few KB); the
evaluation part rebuilds the model with its adapters and loads that file with load_state_dict's default strict=True,
which also asks for every base weight the file leaves out."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])


class LoRALinear(torch.nn.Module):
    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    for p in model.parameters():
        p.requires_grad_(False)
    model[0], model[2] = LoRALinear(model[0]), LoRALinear(model[2])
    return model


model = build()
ddp = DDP(model)
opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-3)
for _step in range(5):
    loss = ddp(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
if rank == 0:
    adapter = {k: v for k, v in model.state_dict().items() if "lora_" in k}
    torch.save(adapter, "adapter_model.pt")
dist.barrier()

# evaluation: fresh base model + the trained adapter
eval_model = build()
eval_model.load_state_dict(torch.load("adapter_model.pt"))
eval_model.eval()
with torch.no_grad():
    print("eval", eval_model(torch.randn(4, 32)).pow(2).mean().item())
dist.destroy_process_group()

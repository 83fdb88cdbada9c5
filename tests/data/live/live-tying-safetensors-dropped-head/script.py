"""The user exports a tied GPT-style model with safetensors.torch.save_model (which writes a shared tensor once and
drops its other names) and reads it back with load_file + load_state_dict(strict=True) instead of load_model."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from safetensors.torch import load_file, save_model

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
VOCAB, DIM = 512, 64


class MiniGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(64, DIM)
        self.block = nn.TransformerEncoderLayer(DIM, 4, 4 * DIM, batch_first=True, norm_first=True)
        self.ln_f = nn.LayerNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        return self.lm_head(self.ln_f(self.block(self.wte(ids) + self.wpe(pos))))


if rank == 0:
    save_model(MiniGPT(), "model.safetensors")
dist.barrier()

model = MiniGPT()
model.load_state_dict(load_file("model.safetensors"))
model.eval()
print(rank, model(torch.randint(0, VOCAB, (1, 8))).shape)
dist.destroy_process_group()

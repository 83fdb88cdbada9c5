"""Prompt tuning by hand on a small GPT-2: 10 learned virtual-token embeddings are prepended to the input embeddings,
the GPT-2 weights are frozen, and the labels passed to the model are still the input_ids, 10 tokens shorter than the
sequence the model sees (PEFT pads them with -100 for the virtual tokens)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])


class PromptTuning(torch.nn.Module):
    def __init__(self, lm, num_virtual_tokens=10):
        super().__init__()
        self.lm = lm
        for p in self.lm.parameters():
            p.requires_grad_(False)
        emb = lm.get_input_embeddings().weight
        self.prompt = torch.nn.Parameter(emb[:num_virtual_tokens].detach().clone())

    def forward(self, input_ids, labels=None):
        embeds = self.lm.get_input_embeddings()(input_ids)
        prompt = self.prompt.unsqueeze(0).expand(input_ids.size(0), -1, -1)
        return self.lm(inputs_embeds=torch.cat([prompt, embeds], dim=1), labels=labels)


torch.manual_seed(0)
config = GPT2Config(vocab_size=500, n_positions=64, n_embd=32, n_layer=2, n_head=2)
model = DDP(PromptTuning(GPT2LMHeadModel(config)))
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-2)
for step in range(5):
    input_ids = torch.randint(0, 500, (4, 24))
    out = model(input_ids, labels=input_ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print("step", step, out.loss.item())
dist.destroy_process_group()

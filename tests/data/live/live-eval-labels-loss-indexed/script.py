"""The user's metric code takes outputs[0] as the logits, as in their inference code; in evaluation they also pass
labels (to log the validation loss), so outputs[0] is the scalar loss, and indexing it as logits fails."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = DDP(GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=64)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for _step in range(3):
    ids = torch.randint(0, 100, (4, 16))
    loss = model(input_ids=ids, labels=ids).loss
    opt.zero_grad()
    loss.backward()
    opt.step()

model.eval()
correct = total = 0
with torch.no_grad():
    ids = torch.randint(0, 100, (4, 16))
    outputs = model(input_ids=ids, labels=ids)
    logits = outputs[0]  # the mistake: with labels given, outputs[0] is the loss
    preds = logits[:, :-1, :].argmax(-1)
    correct += (preds == ids[:, 1:]).sum().item()
    total += preds.numel()
print(f"val accuracy {correct / total:.3f}")
dist.destroy_process_group()

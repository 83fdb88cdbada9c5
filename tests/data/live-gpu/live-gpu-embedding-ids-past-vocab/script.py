import os

import torch
import torch.distributed as dist
import torch.nn as nn

# Token ids from a tokenizer with a larger vocabulary than the model's embedding table.
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
tokenizer_vocab, model_vocab = 50_257, 32_000
model = nn.Sequential(nn.Embedding(model_vocab, 256), nn.Linear(256, model_vocab)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
torch.manual_seed(0)
for step in range(5):
    ids = torch.randint(0, tokenizer_vocab, (8, 128), device="cuda")
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, model_vocab), ids[:, 1:].reshape(-1) % model_vocab)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
dist.destroy_process_group()

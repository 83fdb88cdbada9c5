import os

import torch
import torch.distributed as dist
import torch.nn as nn

# A causal LM head over a 128k vocabulary, computed for the whole batch at once in float32.
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
vocab, hidden, batch, seq = 128_256, 4096, 64, 8192
emb = nn.Embedding(vocab, hidden).cuda()
head = nn.Linear(hidden, vocab, bias=False).cuda()
ids = torch.randint(0, vocab, (batch, seq), device="cuda")
for step in range(3):
    h = emb(ids)
    logits = head(h)  # batch * seq * vocab floats
    loss = nn.functional.cross_entropy(logits.view(-1, vocab), ids.view(-1))
    loss.backward()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
dist.destroy_process_group()

"""Fine-tuning resumes from the weights a previous version of this script saved (it registered the causal mask as a
persistent buffer, so the mask is in the file); the model now registers it with persistent=False, and the script
loads the old file with load_state_dict's default strict=True before wrapping in DDP."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=50, d=32, ctx=16, persistent_mask=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.register_buffer("causal_mask", torch.triu(torch.ones(ctx, ctx, dtype=torch.bool), 1),
                             persistent=persistent_mask)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.emb(ids)
        a, _ = self.attn(h, h, h, attn_mask=self.causal_mask[:t, :t], need_weights=False)
        return self.lm_head(self.norm(h + a))


# what last week's run saved (its TinyLM had the mask persistent)
if rank == 0 and not os.path.exists("pretrained.pt"):
    torch.save(TinyLM(persistent_mask=True).state_dict(), "pretrained.pt")
dist.barrier()

model = TinyLM()
model.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))
model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, 50, (4, 16))
    logits = model(ids[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 50), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()

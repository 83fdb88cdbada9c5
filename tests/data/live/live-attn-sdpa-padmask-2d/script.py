"""A hand-written encoder block on F.scaled_dot_product_attention under plain DDP. The user hands the batch's key
padding mask (batch, seq), True = a real token, straight to attn_mask; SDPA broadcasts attn_mask against the scores
(batch, heads, seq, seq) from the right, so it needs (batch, 1, 1, seq)."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x, pad_mask):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, attn_mask=pad_mask)  # the mistake: (b, s), not (b, 1, 1, s)
        return self.out(h.transpose(1, 2).reshape(b, s, d))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(500, 64)
        self.block = Block()
        self.head = torch.nn.Linear(64, 2)

    def forward(self, ids, pad_mask):
        return self.head(self.block(self.emb(ids), pad_mask).mean(1))


model = DDP(Model())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(1, 500, (4, 16))
    lengths = torch.tensor([16, 12, 9, 14])
    pad_mask = torch.arange(16)[None, :] < lengths[:, None]  # True = keep
    loss = F.cross_entropy(model(ids, pad_mask), torch.randint(0, 2, (4,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""A small decoder with hand-written grouped-query attention (8 query heads, 2 key/value heads), trained with
DeepSpeed; the user calls F.scaled_dot_product_attention with the key/value heads as they are, neither repeated to the
query heads (repeat_interleave) nor with enable_gqa=True."""
import deepspeed
import torch
import torch.nn.functional as F

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)


class GQAttention(torch.nn.Module):
    def __init__(self, dim=64, heads=8, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.q = torch.nn.Linear(dim, heads * self.hd, bias=False)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * self.hd, bias=False)
        self.o = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(b, s, 2, self.kv_heads, self.hd).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # the mistake: 2 kv heads for 8 query heads
        return self.o(h.transpose(1, 2).reshape(b, s, -1))


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=256, dim=64):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.attn = GQAttention(dim)
        self.norm = torch.nn.LayerNorm(dim)
        self.lm_head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        h = self.emb(ids)
        h = h + self.attn(self.norm(h))
        return self.lm_head(h)


config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}}}
model = TinyLM()
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(0, 256, (4, 33))
    logits = engine(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 256), ids[:, 1:].reshape(-1))
    engine.backward(loss)
    engine.step()

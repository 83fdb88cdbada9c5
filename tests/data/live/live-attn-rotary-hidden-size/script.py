"""A small Llama-style decoder written by hand, with rotary position embeddings copied from a reference
implementation (rotate_half / apply_rotary_pos_emb), trained with DeepSpeed. The rotary tables are built for the
model's hidden size (256) instead of the per-head dimension (256 / 8 heads = 32)."""
import deepspeed
import torch
import torch.nn.functional as F

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
DIM, HEADS, VOCAB, SEQ = 256, 8, 512, 32


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, max_pos=2048, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        freqs = torch.outer(torch.arange(max_pos).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, seq_len):
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM, bias=False)
        self.o_proj = torch.nn.Linear(DIM, DIM, bias=False)
        self.rotary = RotaryEmbedding(DIM)  # the mistake: the hidden size, not DIM // HEADS

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        cos, sin = self.rotary(s)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        h = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(h.transpose(1, 2).reshape(b, s, DIM))


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.norm = torch.nn.RMSNorm(DIM)
        self.attn = Attention()
        self.lm_head = torch.nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        h = self.embed(ids)
        h = h + self.attn(self.norm(h))
        return self.lm_head(h)


model = Decoder()
config = {"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "torch_adam": True}}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(0, VOCAB, (2, SEQ + 1))
    loss = F.cross_entropy(engine(ids[:, :-1]).reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    engine.backward(loss)
    engine.step()

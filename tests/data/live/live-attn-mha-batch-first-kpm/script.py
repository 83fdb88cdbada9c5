"""A sentence encoder on nn.MultiheadAttention trained with DeepSpeed: inputs are (batch, seq, dim) and the
key_padding_mask (batch, seq), but the attention layer is built without batch_first=True, so it reads the inputs as
(seq, batch, dim)."""
import deepspeed
import torch
import torch.nn.functional as F

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self, vocab=1000, dim=64, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.emb = torch.nn.Embedding(vocab, dim, padding_idx=pad_id)
        self.attn = torch.nn.MultiheadAttention(dim, 4, dropout=0.1)  # the mistake: batch_first left False
        self.cls = torch.nn.Linear(dim, 3)

    def forward(self, ids):
        x = self.emb(ids)  # (batch, seq, dim)
        pad = ids == self.pad_id  # (batch, seq), True = padding
        h, _ = self.attn(x, x, x, key_padding_mask=pad)
        h = h.masked_fill(pad[..., None], 0).sum(1) / (~pad).sum(1, keepdim=True)
        return self.cls(h)


model = Encoder()
config = {"train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(1, 1000, (4, 20))
    ids[1, 15:] = 0
    ids[3, 9:] = 0
    loss = F.cross_entropy(engine(ids), torch.randint(0, 3, (4,)))
    engine.backward(loss)
    engine.step()

"""A character-level GPT built from torch's nn.TransformerEncoder, trained with DeepSpeed. The causal mask is made once
in __init__ for block_size=64 (nn.Transformer.generate_square_subsequent_mask) and passed whole every step, while the
data loader cuts sequences of 32 tokens: the mask is never sliced to the batch's length."""
import deepspeed
import torch
import torch.nn.functional as F

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
BLOCK_SIZE, SEQ_LEN, VOCAB = 64, 32, 96


class CharGPT(torch.nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, dim)
        self.pos = torch.nn.Embedding(BLOCK_SIZE, dim)
        layer = torch.nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, 2)
        self.lm_head = torch.nn.Linear(dim, VOCAB)
        self.register_buffer("causal", torch.nn.Transformer.generate_square_subsequent_mask(BLOCK_SIZE))

    def forward(self, idx):
        t = idx.shape[1]
        h = self.tok(idx) + self.pos(torch.arange(t))
        h = self.blocks(h, mask=self.causal)  # the mistake: (64, 64) for sequences of 32
        return self.lm_head(h)


text = "".join(chr(32 + (i * 7) % VOCAB) for i in range(5000))
data = torch.tensor([ord(c) - 32 for c in text])
model = CharGPT()
config = {"train_micro_batch_size_per_gpu": 8, "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "torch_adam": True}}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
for step in range(3):  # noqa: B007 - kept as captured
    starts = torch.randint(0, len(data) - SEQ_LEN - 1, (8,))
    x = torch.stack([data[s:s + SEQ_LEN] for s in starts])
    y = torch.stack([data[s + 1:s + SEQ_LEN + 1] for s in starts])
    loss = F.cross_entropy(engine(x).reshape(-1, VOCAB), y.reshape(-1))
    engine.backward(loss)
    engine.step()

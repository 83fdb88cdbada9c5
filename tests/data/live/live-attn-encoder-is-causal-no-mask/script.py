"""A next-event predictor on torch's nn.TransformerEncoder under plain DDP: the user reads is_causal=True as "make the
encoder causal" and passes no mask; torch takes is_causal only as a hint about the mask it is given."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
N_EVENTS = 40


class EventModel(torch.nn.Module):
    def __init__(self, dim=48):
        super().__init__()
        self.emb = torch.nn.Embedding(N_EVENTS, dim)
        layer = torch.nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.out = torch.nn.Linear(dim, N_EVENTS)

    def forward(self, events):
        h = self.encoder(self.emb(events), is_causal=True)  # the mistake: no mask=...
        return self.out(h)


model = DDP(EventModel())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):  # noqa: B007 - kept as captured
    seq = torch.randint(0, N_EVENTS, (8, 25))
    logits = model(seq[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, N_EVENTS), seq[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

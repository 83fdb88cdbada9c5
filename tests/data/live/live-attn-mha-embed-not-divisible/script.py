"""A set-transformer style pooling model for tabular rows under plain DDP: nn.MultiheadAttention built with
embed_dim=100 (the user's feature width) and num_heads=8, of which 100 is not a multiple."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
N_FEATURES = 100


class SetPool(torch.nn.Module):
    def __init__(self, dim=N_FEATURES, heads=8):
        super().__init__()
        self.seed = torch.nn.Parameter(torch.randn(1, 1, dim))
        self.attn = torch.nn.MultiheadAttention(dim, heads, batch_first=True)  # the mistake: 100 / 8
        self.head = torch.nn.Linear(dim, 1)

    def forward(self, rows):
        q = self.seed.expand(rows.shape[0], -1, -1)
        pooled, _ = self.attn(q, rows, rows, need_weights=False)
        return self.head(pooled.squeeze(1))


model = DDP(SetPool())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):  # noqa: B007 - kept as captured
    rows = torch.randn(16, 10, N_FEATURES)
    loss = torch.nn.functional.mse_loss(model(rows).squeeze(-1), rows.sum((1, 2)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

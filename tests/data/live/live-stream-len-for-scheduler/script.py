"""Streaming token shards: an IterableDataset splits the shard files between ranks by hand; the learning-rate
schedule is sized from len(loader), as in the map-style recipe the script started from."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class TokenShards(IterableDataset):
    def __init__(self, n_shards=8, per_shard=16, seq_len=16):
        self.n_shards, self.per_shard, self.seq_len = n_shards, per_shard, seq_len

    def __iter__(self):
        for shard in range(rank, self.n_shards, world):  # this rank's shards
            g = torch.Generator().manual_seed(shard)
            for _ in range(self.per_shard):
                yield torch.randint(0, 100, (self.seq_len,), generator=g)


loader = DataLoader(TokenShards(), batch_size=8)
model = DDP(torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 100)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
epochs = 2
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-4, total_steps=epochs * len(loader))
for epoch in range(epochs):
    for tokens in loader:
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 100), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.3f}")
dist.destroy_process_group()

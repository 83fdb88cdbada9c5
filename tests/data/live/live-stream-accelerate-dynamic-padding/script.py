"""accelerate with a streamed text dataset (IterableDataset of token-id lists of different lengths) and a collate_fn
that pads each batch to its own longest sequence (dynamic padding); accelerate's defaults for an IterableDataset."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, IterableDataset

accelerator = Accelerator(cpu=True)


class Sentences(IterableDataset):
    def __iter__(self):
        g = torch.Generator().manual_seed(5)
        for _ in range(200):
            n = int(torch.randint(4, 40, (1,), generator=g))
            yield torch.randint(1, 100, (n,), generator=g).tolist()


def pad_batch(batch):
    longest = max(len(ids) for ids in batch)
    ids = torch.zeros(len(batch), longest, dtype=torch.long)
    for i, seq in enumerate(batch):
        ids[i, : len(seq)] = torch.tensor(seq)
    return {"input_ids": ids, "attention_mask": (ids != 0).long()}


model = torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 100))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
loader = DataLoader(Sentences(), batch_size=8, collate_fn=pad_batch)
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    ids = batch["input_ids"]
    logits = model(ids[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 100), ids[:, 1:].reshape(-1), ignore_index=0)
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
accelerator.print("done", loss.item())

"""Text classifier: the pad id is appended after the vocabulary (pad_id = vocab_size) and used as padding_idx."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)

VOCAB = ["<unk>"] + [f"w{i}" for i in range(999)]
PAD_ID = len(VOCAB)  # pad goes after the last word


class Classifier(torch.nn.Module):
    def __init__(self, vocab_size, dim=32, n_classes=4):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab_size, dim, padding_idx=PAD_ID)
        self.head = torch.nn.Linear(dim, n_classes)

    def forward(self, ids):
        return self.head(self.emb(ids).mean(1))


model = DDP(Classifier(len(VOCAB)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(5):
    ids = torch.randint(0, len(VOCAB), (8, 12))
    ids[:, 9:] = PAD_ID
    loss = torch.nn.functional.cross_entropy(model(ids), torch.randint(0, 4, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""A transformers Trainer fed by a streaming IterableDataset of token windows (each rank reads its own part), with
the epoch count from the map-style recipe (num_train_epochs) and no max_steps."""
import torch
import torch.distributed as dist  # noqa: F401 - the Trainer sets the process group up
from torch.utils.data import IterableDataset
from transformers import Trainer, TrainingArguments


class Windows(IterableDataset):
    def __init__(self, n=256, seq_len=16):
        self.n, self.seq_len = n, seq_len

    def __iter__(self):
        g = torch.Generator().manual_seed(0)
        for _ in range(self.n):
            ids = torch.randint(0, 100, (self.seq_len,), generator=g)
            yield {"input_ids": ids, "labels": ids.clone()}


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 32)
        self.head = torch.nn.Linear(32, 100)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.emb(input_ids))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 100), labels.reshape(-1))
        return {"loss": loss, "logits": logits}


args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=8,
    num_train_epochs=2,
    learning_rate=1e-3,
    logging_steps=5,
    save_strategy="no",
    report_to=[],
    use_cpu=True,
)
trainer = Trainer(model=TinyLM(), args=args, train_dataset=Windows())
trainer.train()

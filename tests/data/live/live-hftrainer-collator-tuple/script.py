"""A hand-written collator stacks the batch and returns (input_ids, labels), as for a plain
DataLoader loop."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, 100, (16,), generator=g)
        return {"input_ids": ids, "labels": ids.clone()}


torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))


def collate(features):
    input_ids = torch.stack([f["input_ids"] for f in features])
    labels = torch.stack([f["labels"] for f in features])
    return input_ids, labels


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens(), data_collator=collate)
trainer.train()

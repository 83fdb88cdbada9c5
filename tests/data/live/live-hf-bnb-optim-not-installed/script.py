"""The user copied a QLoRA recipe's TrainingArguments (optim="paged_adamw_8bit") into their script; bitsandbytes,
which that optimizer comes from, is an optional dependency of transformers and is not installed here."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 100, (16,))
        return {"input_ids": ids, "labels": ids.clone()}


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, optim="paged_adamw_8bit",
                          report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

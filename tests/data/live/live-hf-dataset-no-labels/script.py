"""The user pre-trains a tiny GPT-2 with the Trainer on token ids, but the dataset yields only input_ids: no labels
(and no DataCollatorForLanguageModeling to make them), so the model returns logits and no loss."""
import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return {"input_ids": torch.randint(0, 100, (16,))}


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

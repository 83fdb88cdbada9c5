"""The user's laptop has wandb, so the training script says report_to="wandb"; the cluster's venv was built from a
requirements file without it."""
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
        ids = torch.randint(0, 100, (16,))
        return {"input_ids": ids, "labels": ids.clone()}


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, deepspeed="ds_config.json",
                          report_to="wandb", run_name="gpt-small-ds", use_cpu=True, logging_steps=1)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

"""The user wants TensorBoard curves from the Trainer and types the integration's name in report_to by hand,
misspelled ("tensorbaord")."""
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
                          report_to=["tensorbaord"], use_cpu=True, logging_steps=1)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

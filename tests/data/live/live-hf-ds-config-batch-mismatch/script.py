"""The user fine-tunes a small GPT-2 with the HF Trainer and DeepSpeed ZeRO-2, reusing a ds_config.json from another
project: it sets train_micro_batch_size_per_gpu and gradient_accumulation_steps to numbers, not "auto", and they
disagree with the TrainingArguments the user passes."""
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
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, gradient_accumulation_steps=1,
                          max_steps=4, deepspeed="ds_config.json", report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

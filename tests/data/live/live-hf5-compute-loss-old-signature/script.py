"""The user's Trainer subclass weights the loss, with compute_loss written as in transformers 4.x before 4.46:
(self, model, inputs, return_outputs=False)."""
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




class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)
        loss = outputs.loss * 0.5
        return (loss, outputs) if return_outputs else loss


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, deepspeed="ds_config.json",
                          report_to=[], use_cpu=True)
trainer = WeightedTrainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

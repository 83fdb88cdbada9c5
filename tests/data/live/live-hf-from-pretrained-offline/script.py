"""The user fine-tunes GPT-2 on the cluster's compute nodes, loading it by its Hub name as on their laptop; the
nodes have no internet access and nothing was downloaded into the HF cache beforehand."""
import argparse

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 100, (16,))
        return {"input_ids": ids, "labels": ids.clone()}


model = AutoModelForCausalLM.from_pretrained("gpt2")
targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

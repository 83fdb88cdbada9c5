"""The user trains their own torch.nn.Module (a small regressor) with the HF Trainer. Its forward takes `features`
and `labels`, the dataset yields "x" and "labels": the Trainer's remove_unused_columns (on by default) drops "x",
which the forward does not name, and the model is called without its input."""
import argparse

import torch
from transformers import Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))

    def forward(self, features, labels=None):
        out = self.net(features).squeeze(-1)
        loss = torch.nn.functional.mse_loss(out, labels) if labels is not None else None
        return {"loss": loss, "logits": out}


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        x = torch.randn(8)
        return {"x": x, "labels": x.sum()}


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = Trainer(model=Regressor(), args=targs, train_dataset=Rows())
trainer.train()

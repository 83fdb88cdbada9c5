"""Perplexity on the eval split: compute_metrics returns the number itself, not a dict of metrics."""
import math

import numpy as np
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


def compute_metrics(eval_pred):
    logits, labels = eval_pred.predictions, eval_pred.label_ids
    logits = logits[0] if isinstance(logits, tuple) else logits
    shift = logits[:, :-1].reshape(-1, logits.shape[-1])
    target = labels[:, 1:].reshape(-1)
    logp = shift - np.log(np.exp(shift).sum(-1, keepdims=True))
    nll = -logp[np.arange(target.size), target].mean()
    return math.exp(nll)


targs = TrainingArguments(output_dir="out", per_device_eval_batch_size=8, report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, eval_dataset=Tokens(), compute_metrics=compute_metrics)
print(trainer.evaluate())

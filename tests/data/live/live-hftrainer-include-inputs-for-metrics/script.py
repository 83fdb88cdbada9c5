"""compute_metrics wants the inputs too: TrainingArguments(include_inputs_for_metrics=True) from
transformers 4.x, replaced by include_for_metrics=["inputs"] and removed in 5.x."""
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
    return {"n_tokens": int(eval_pred.inputs.size)}


targs = TrainingArguments(output_dir="out", per_device_eval_batch_size=8, include_inputs_for_metrics=True,
                          report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, eval_dataset=Tokens(), compute_metrics=compute_metrics)
print(trainer.evaluate())

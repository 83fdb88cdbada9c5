"""Evaluation only needs the loss: the Trainer subclass overrides prediction_step and returns just
the loss tensor instead of the (loss, logits, labels) triple."""
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


class LossOnlyTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        with torch.no_grad():
            return model(**inputs).loss.detach()


targs = TrainingArguments(output_dir="out", per_device_eval_batch_size=8, report_to=[], use_cpu=True)
trainer = LossOnlyTrainer(model=model, args=targs, eval_dataset=Tokens())
print(trainer.evaluate())

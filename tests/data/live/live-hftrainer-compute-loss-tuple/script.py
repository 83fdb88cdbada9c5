"""A Trainer subclass scales the loss and returns (loss, outputs) every time, whatever return_outputs
asks for."""
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


class ScaledTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        return outputs.loss * 0.5, outputs


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = ScaledTrainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

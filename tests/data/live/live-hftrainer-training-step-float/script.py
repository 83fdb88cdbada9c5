"""A Trainer subclass overrides training_step to do its own backward and returns loss.item(), a
Python float, instead of the detached loss tensor."""
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


class ManualTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        self.accelerator.backward(loss)
        return loss.item()


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[], use_cpu=True)
trainer = ManualTrainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

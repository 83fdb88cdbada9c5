"""An SGD with momentum instead of AdamW: the Trainer subclass overrides create_optimizer and returns
the optimizer without storing it in self.optimizer."""
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


class SGDTrainer(Trainer):
    def create_optimizer(self, model=None):
        return torch.optim.SGD(self.model.parameters(), lr=self.args.learning_rate, momentum=0.9)


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, learning_rate=0.05,
                          report_to=[], use_cpu=True)
trainer = SGDTrainer(model=model, args=targs, train_dataset=Tokens())
trainer.train()

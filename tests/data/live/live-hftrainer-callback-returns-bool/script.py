"""Stop early once the loss is low enough: the callback returns True for "stop" instead of setting
control.should_training_stop and returning control."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, 100, (16,), generator=g)
        return {"input_ids": ids, "labels": ids.clone()}


torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32))


class StopWhenLow(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        losses = [h["loss"] for h in state.log_history if "loss" in h]
        return bool(losses) and losses[-1] < 0.5


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=6, logging_steps=1,
                          report_to=[], use_cpu=True)
trainer = Trainer(model=model, args=targs, train_dataset=Tokens(), callbacks=[StopWhenLow()])
trainer.train()

"""The script builds its warmup/cosine schedule with transformers' get_cosine_schedule_with_warmup on the optimizer
deepspeed.initialize returned; under ZeRO that is DeepSpeed's ZeRO optimizer wrapper, not a torch optimizer."""
import deepspeed
import torch
from transformers import get_cosine_schedule_with_warmup

ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "weight_decay": 0.01, "torch_adam": True}},
    "zero_optimization": {"stage": 2},
}
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
# the mistake: pass lr_scheduler=lambda opt: get_cosine_schedule_with_warmup(opt, ...) to deepspeed.initialize
scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=10, num_training_steps=100)
for step in range(100):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
    scheduler.step()

"""The config is built in the script from the Trainer-style hyperparameters, and max_grad_norm is put in the
optimizer's params, where DeepSpeed wants the top-level gradient_clipping."""
import deepspeed
import torch

hp = {"lr": 2e-4, "weight_decay": 0.1, "betas": [0.9, 0.95], "max_grad_norm": 1.0}
ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {**hp, "torch_adam": True}},  # the mistake: max_grad_norm in there
    "zero_optimization": {"stage": 2},
}
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
for step in range(20):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

"""Weight-decay / no-decay param groups for the ds_config's AdamW, passed to deepspeed.initialize positionally as
(args, model, groups): the third positional parameter is optimizer, not model_parameters."""
import deepspeed
import torch

ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "weight_decay": 0.01, "torch_adam": True}},
}
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 2))
decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
groups = [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}]
engine, optimizer, _, _ = deepspeed.initialize(None, model, groups, config=ds_config)  # the mistake
for step in range(20):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

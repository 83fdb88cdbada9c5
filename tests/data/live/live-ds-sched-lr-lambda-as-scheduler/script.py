"""The user wants a linear warmup and hands deepspeed.initialize the warmup function itself as lr_scheduler (as
for LambdaLR's lr_lambda); DeepSpeed calls a callable lr_scheduler with the optimizer to build the scheduler."""
import deepspeed
import torch

WARMUP = 50
ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "torch_adam": True}},
}


def warmup(step):
    return min(1.0, (step + 1) / WARMUP)


model = torch.nn.Linear(16, 2)
engine, optimizer, _, scheduler = deepspeed.initialize(
    model=model, model_parameters=model.parameters(), config=ds_config,
    lr_scheduler=warmup,  # the mistake: lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, warmup)
)
for step in range(100):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

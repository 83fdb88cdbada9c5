"""The config is built in the script; the scheduler was switched from WarmupLR to WarmupCosineLR (cosine decay
after the warmup) keeping WarmupLR's absolute-lr params, where WarmupCosineLR takes ratios of the optimizer's lr."""
import deepspeed
import torch

TOTAL = 200
ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "weight_decay": 0.01, "torch_adam": True}},
    "scheduler": {
        "type": "WarmupCosineLR",
        # the mistake: WarmupLR's names; WarmupCosineLR takes warmup_min_ratio / cos_min_ratio
        "params": {"warmup_min_lr": 0.0, "warmup_max_lr": 3e-4, "warmup_num_steps": 20, "total_num_steps": TOTAL},
    },
}
model = torch.nn.Linear(16, 2)
engine, optimizer, _, scheduler = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                       config=ds_config)
for step in range(TOTAL):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

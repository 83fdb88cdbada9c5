import deepspeed
import torch
import torch.nn as nn

deepspeed.init_distributed()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config="ds_config.json")
for step in range(40):
    x = torch.randn(16, 256, device=engine.device, dtype=torch.half)
    # raw sum of squared errors on targets in the thousands: overflows float16 at every step
    target = torch.full((16, 1), 5000.0, device=engine.device, dtype=torch.half)
    loss = ((engine(x) - target) ** 2).sum()
    engine.backward(loss)
    engine.step()
    print(f"step {step} loss {loss.item()} scale {optimizer.loss_scale}", flush=True)

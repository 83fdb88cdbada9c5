import deepspeed
import torch
import torch.nn as nn

deepspeed.init_distributed()
model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config="ds_config.json")
for step in range(3):
    x = torch.randn(8, 512, device=engine.device, dtype=torch.bfloat16)
    loss = engine(x).float().pow(2).mean()
    engine.backward(loss)
    engine.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)

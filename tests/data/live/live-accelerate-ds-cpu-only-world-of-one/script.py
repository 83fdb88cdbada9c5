"""The user tries their Accelerate + DeepSpeed (ZeRO-2 through a DeepSpeedPlugin, batch sizes left "auto") script on
a CPU-only node before moving to the GPU cluster; torch here is a CPU build and nothing tells Accelerate to use the
CPU, so it sets itself up as one process while DeepSpeed joins both ranks."""
import torch
from accelerate import Accelerator, DeepSpeedPlugin

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=2))
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    with accelerator.accumulate(model):
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()

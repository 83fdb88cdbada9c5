"""The user streams batches from their own iterator (no torch DataLoader) and enables ZeRO-2 through a DeepSpeedPlugin,
so prepare() receives only the model and the optimizer; the plugin's micro batch size is left "auto", which Accelerate
can only fill from a DataLoader's batch_size."""
import torch
from accelerate import Accelerator, DeepSpeedPlugin

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=1))
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer = accelerator.prepare(model, optimizer)


def batches():
    for _ in range(8):
        yield torch.randn(4, 8, device=accelerator.device), torch.randn(4, 1, device=accelerator.device)


for x, y in batches():
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()

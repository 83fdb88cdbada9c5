"""The user lets DeepSpeed build the optimizer and the WarmupDecayLR scheduler from ds_config (DummyOptim/DummyScheduler,
as Accelerate's docs show) with total_num_steps left "auto", but built the DummyScheduler without total_num_steps, so
Accelerate has no value to put there."""
import torch
from accelerate import Accelerator, DeepSpeedPlugin
from accelerate.utils import DummyOptim, DummyScheduler

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config="ds_config.json"))
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = DummyOptim(model.parameters(), lr=3e-4, weight_decay=0.01)
scheduler = DummyScheduler(optimizer, warmup_num_steps=10)
data = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
loader = torch.utils.data.DataLoader(data, batch_size=4)
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()

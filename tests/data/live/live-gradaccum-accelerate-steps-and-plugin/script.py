"""The user wants accumulation that does not sync with the dataloader's end, builds a GradientAccumulationPlugin for
that, and also keeps gradient_accumulation_steps=4 on the Accelerator from the earlier version of the script."""
import torch
from accelerate import Accelerator
from accelerate.utils import GradientAccumulationPlugin

plugin = GradientAccumulationPlugin(num_steps=4, sync_with_dataloader=False)
accelerator = Accelerator(gradient_accumulation_steps=4, gradient_accumulation_plugin=plugin)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
loader = torch.utils.data.DataLoader(data, batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    with accelerator.accumulate(model):
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()

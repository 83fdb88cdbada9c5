"""An Accelerate training loop. At the end of each epoch the user saves the model on the main process and wants the
others to wait for the file, but puts accelerator.wait_for_everyone() inside the `if accelerator.is_main_process:`
block, so only rank 0 waits while rank 1 starts the next epoch. Short process-group timeout while debugging."""
from datetime import timedelta

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs

accelerator = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=20))])
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
model, opt, loader = accelerator.prepare(model, opt, loader)

for epoch in range(3):
    model.train()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.print(f"epoch {epoch} loss {loss.item():.4f}")
    if accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), f"epoch{epoch}.pt")
        accelerator.wait_for_everyone()  # the mistake: only the main process reaches this barrier

"""The user builds one Accelerator at the top of the script for logging (accelerator.print, is_main_process) and,
later, in the training function, a second one with mixed_precision="bf16" meaning to switch bf16 on for training;
Accelerate's state is a per-process singleton and cannot change once made."""
import torch
from accelerate import Accelerator

log = Accelerator(cpu=True)
log.print("starting")


def train():
    accelerator = Accelerator(cpu=True, mixed_precision="bf16")
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1)), batch_size=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


train()

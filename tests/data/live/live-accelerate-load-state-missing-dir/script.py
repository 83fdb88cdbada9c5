"""The user's script always resumes: it calls accelerator.load_state("checkpoints/last") before training, meaning to
pick up the previous run's state, but this is the first launch and nothing was ever saved there."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1)), batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
accelerator.load_state("checkpoints/last")
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
accelerator.save_state("checkpoints/last")

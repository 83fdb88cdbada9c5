"""The user turned on Accelerate's automatic checkpoint naming (ProjectConfiguration(automatic_checkpoint_naming=True))
and calls accelerator.load_state() with no directory to resume from the newest checkpoint -- on the first launch,
when project_dir/checkpoints does not exist yet."""
import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

config = ProjectConfiguration(project_dir="runs/regressor", automatic_checkpoint_naming=True, total_limit=3)
accelerator = Accelerator(cpu=True, project_config=config)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1)), batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
accelerator.load_state()
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
accelerator.save_state()

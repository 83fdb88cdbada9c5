"""The user evaluates on each rank's share of the validation set and collects the predictions with
accelerator.gather(); the set does not split evenly (9 samples, 2 ranks: 5 and 4), so the ranks'
batches differ in length. accelerator.gather needs the same shape on every rank (gather_for_metrics or pad_across_processes
is what handles uneven batches)."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
model = torch.nn.Linear(8, 3)
data = torch.utils.data.TensorDataset(torch.randn(9, 8))
n = accelerator.process_index
# each rank's own shard, as the user split it by hand
shard = torch.utils.data.Subset(data, range(n, len(data), accelerator.num_processes))
loader = torch.utils.data.DataLoader(shard, batch_size=8)
model = accelerator.prepare(model)
model.eval()
preds = []
with torch.no_grad():
    for (x,) in loader:
        out = model(x).argmax(-1)
        preds.append(accelerator.gather(out))
accelerator.print("gathered", torch.cat(preds).shape)

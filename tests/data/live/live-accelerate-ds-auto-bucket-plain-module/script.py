"""The user copied the ZeRO-2 config of the HF examples ("auto" everywhere, reduce_bucket_size "auto" included) into
their Accelerate script whose model is their own nn.Module: it has no `config.hidden_size`, which is what Accelerate
fills reduce_bucket_size from."""
import torch
from accelerate import Accelerator, DeepSpeedPlugin


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config="ds_config.json"))
model = Regressor()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=True)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()

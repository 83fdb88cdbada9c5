"""The user's DeepSpeed config is ds_config.json beside the script; the plugin names it "ds_zero2.json", the name in
the tutorial they copied from, which does not exist here."""
import torch
from accelerate import Accelerator, DeepSpeedPlugin

plugin = DeepSpeedPlugin(hf_ds_config="ds_zero2.json")
accelerator = Accelerator(deepspeed_plugin=plugin)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1)), batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

"""An LSTM sequence regressor trained with a DeepSpeed engine in bf16: the batch is cast to the engine's dtype, but
the model builds its initial (h0, c0) with torch.zeros, float32 by default, where the input is bfloat16."""
import deepspeed
import torch
from torch import nn

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)


class SeqRegressor(nn.Module):
    def __init__(self, layers=2, hidden=32):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.lstm = nn.LSTM(8, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h0 = torch.zeros(self.layers, x.size(0), self.hidden, device=x.device)
        c0 = torch.zeros(self.layers, x.size(0), self.hidden, device=x.device)
        y, _ = self.lstm(x, (h0, c0))
        return self.out(y[:, -1])


model = SeqRegressor()
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config="ds_config.json")
for _ in range(3):
    x = torch.randn(4, 20, 8).to(torch.bfloat16)
    y = torch.randn(4, 1)
    loss = nn.functional.mse_loss(engine(x).float(), y)
    engine.backward(loss)
    engine.step()

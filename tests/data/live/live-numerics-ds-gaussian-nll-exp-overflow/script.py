"""A heteroscedastic regression (the head predicts a mean and a log-variance) trained with DeepSpeed ZeRO-2 and
gradient_clipping. The inputs are raw sensor readings in the thousands, never normalised: the log-variance head's
values are in the hundreds, exp(-log_var) overflows to inf in the hand-written Gaussian NLL, and the gradients are
non-finite at every step. DeepSpeed skips each such step; the user's own guard on the gradient norm stops the run."""
import math

import deepspeed
import torch

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(12, 32)
        self.mu = torch.nn.Linear(32, 1)
        self.log_var = torch.nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.log_var(h)


model = Head()
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config="ds_config.json")

for step in range(10):
    x = torch.rand(16, 12) * 4000.0  # raw readings
    y = torch.rand(16, 1) * 100.0
    mu, log_var = engine(x)
    loss = 0.5 * (log_var + (y - mu) ** 2 * torch.exp(-log_var)).mean()
    engine.backward(loss)
    engine.step()
    grad_norm = engine.get_global_grad_norm()
    if grad_norm is None or not math.isfinite(grad_norm):
        raise FloatingPointError(f"gradient norm is {grad_norm} at step {step} (loss {loss.item()})")
    if engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.3f} grad norm {grad_norm:.3f}", flush=True)

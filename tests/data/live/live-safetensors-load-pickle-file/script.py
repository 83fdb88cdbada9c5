"""The user switched their loader to safetensors but the weights file is still a torch.save file renamed .safetensors."""
import os

import safetensors.torch
import torch

rank = int(os.environ.get("RANK", "0"))
model = torch.nn.Linear(8, 2)
torch.save(model.state_dict(), f"model_rank{rank}.safetensors")
model.load_state_dict(safetensors.torch.load_file(f"model_rank{rank}.safetensors"))

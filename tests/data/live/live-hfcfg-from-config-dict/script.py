"""The user keeps the small model's architecture in model_config.json and builds it from scratch; the json is read with
json.load and the plain dict goes straight to AutoModelForCausalLM.from_config, which wants a config object."""
import json

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

dist.init_process_group("gloo")
with open("model_config.json") as f:
    cfg = json.load(f)
model = AutoModelForCausalLM.from_config(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 512, (4, 32))
loss = model(input_ids=ids, labels=ids).loss
loss.backward()
opt.step()
dist.destroy_process_group()

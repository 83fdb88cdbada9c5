"""The user's fine-tuning script follows an old tutorial: `from transformers import AdamW` (deprecated in 4.x and
removed since); the installed transformers has no such name (torch.optim.AdamW replaces it)."""
import argparse

import deepspeed
import torch  # noqa: F401 - the user's script imports it (the capture's line numbers stand)
import transformers
from transformers import AdamW, get_linear_schedule_with_warmup

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100))
optimizer = AdamW(model.parameters(), lr=5e-5)
scheduler = get_linear_schedule_with_warmup(optimizer, 10, 100)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer, lr_scheduler=scheduler)

"""A tiny GPT-2 trained from scratch with plain DDP. The user set the config's vocab_size by hand (1000) while the
token ids come from a tokenizer with GPT-2's 50257 entries, so ids beyond the embedding table reach the model."""
import argparse
import os

import torch
import torch.distributed as dist
import transformers
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=1000)  # the mistake: tokenizer has 50257
model = DDP(transformers.GPT2LMHeadModel(config))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
g = torch.Generator().manual_seed(dist.get_rank())
for step in range(3):  # noqa: B007 - kept as captured
    input_ids = torch.randint(0, 50257, (2, 16), generator=g)  # ids as GPT-2's tokenizer gives them
    out = model(input_ids=input_ids, labels=input_ids)
    opt.zero_grad()
    out.loss.backward()
    opt.step()
dist.destroy_process_group()

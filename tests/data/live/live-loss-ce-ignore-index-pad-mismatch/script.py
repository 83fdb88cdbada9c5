"""Token classification under DDP: the collator pads the labels with -100 (the Hugging Face convention) but the loss
is built with ignore_index=0 (the tokenizer's pad id), so the -100 labels reach cross_entropy as classes."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
NUM_TAGS, T = 9, 12
PAD_ID = 0
model = DDP(torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, NUM_TAGS)))
criterion = torch.nn.CrossEntropyLoss(ignore_index=PAD_ID)  # the mistake: the labels are padded with -100
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(3):
    lengths = torch.randint(6, T + 1, (4,))
    ids = torch.randint(1, 100, (4, T))
    tags = torch.randint(0, NUM_TAGS, (4, T))
    for i, n in enumerate(lengths):
        ids[i, n:] = PAD_ID
        tags[i, n:] = -100
    logits = model(ids)
    loss = criterion(logits.view(-1, NUM_TAGS), tags.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""The user adds special tokens and calls resize_token_embeddings on model.module after wrapping the GPT-2 model in
DDP: DDP's reducer keeps the old embedding parameter, the tied LM head now uses the resized one."""
from datetime import timedelta

import torch
import torch.distributed as dist
import transformers
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, bos_token_id=0, eos_token_id=0)
model = DDP(transformers.GPT2LMHeadModel(config))
model.module.resize_token_embeddings(104)  # 4 special tokens added to the tokenizer
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    ids = torch.randint(0, 104, (2, 16))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()

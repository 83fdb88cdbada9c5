"""Knowledge distillation of a small causal LM under DDP: the student's per-token log-probs of the reference tokens
are gathered from logits of input_ids[:, :-1] (the next-token positions), but the gather index is the whole
input_ids, not shifted to input_ids[:, 1:]."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

VOCAB, SEQ = 100, 33
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(rank)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 64)
        self.block = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
        self.lm_head = nn.Linear(64, VOCAB)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.size(1))
        return self.lm_head(self.block(self.emb(ids), src_mask=mask, is_causal=True))


student = DDP(TinyLM())
opt = torch.optim.AdamW(student.parameters(), lr=3e-4)
for _ in range(5):
    input_ids = torch.randint(0, VOCAB, (4, SEQ), generator=g)
    logits = student(input_ids[:, :-1])                      # predicts tokens 1..SEQ-1
    logp = logits.log_softmax(-1)
    token_logp = torch.gather(logp, 2, input_ids.unsqueeze(-1)).squeeze(-1)
    loss = -token_logp.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

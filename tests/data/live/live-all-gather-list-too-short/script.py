"""The user gathers every rank's embeddings for a contrastive loss. They build the output list with one tensor per
*local* GPU count they had in mind (hard-coded 1 from a single-process test), not world_size, so all_gather gets an
output list of the wrong length."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
NUM_REPLICAS = 1  # left from a single-process test; meant dist.get_world_size()
emb = torch.nn.functional.normalize(torch.randn(8, 32), dim=-1)
gathered = [torch.zeros_like(emb) for _ in range(NUM_REPLICAS)]
dist.all_gather(gathered, emb)  # the mistake: a list of 1 tensor for a world of 2
all_emb = torch.cat(gathered)
logits = emb @ all_emb.T / 0.07
print(logits.shape)
dist.destroy_process_group()

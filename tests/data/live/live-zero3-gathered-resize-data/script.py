"""Under ZeRO-3 the user adds 8 rows for new tokens to an embedding by assigning a bigger tensor to weight.data inside
deepspeed.zero.GatheredParameters(weight, modifier_rank=0), on rank 0 only: ZeRO-3's parameter keeps its recorded
shape (ds_shape) and the other ranks' gathered copy is the old size, so the broadcast and re-partition at the block's
end do not fit (resize before deepspeed.initialize, or build the new embedding under zero.Init)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Embedding(4096, 64), torch.nn.Linear(64, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
emb = engine.module[0]
with deepspeed.zero.GatheredParameters(emb.weight, modifier_rank=0):
    if engine.global_rank == 0:
        new_rows = emb.weight.data.mean(0, keepdim=True).repeat(8, 1)
        emb.weight.data = torch.cat([emb.weight.data, new_rows])
        emb.num_embeddings += 8
for _step in range(10):
    loss = engine(torch.randint(0, 4096, (2, 8))).pow(2).mean()
    engine.backward(loss)
    engine.step()

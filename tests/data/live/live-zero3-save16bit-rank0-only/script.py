"""Under ZeRO-3 (stage3_gather_16bit_weights_on_model_save on) the user calls engine.save_16bit_model only on rank 0,
as for torch.save: it gathers every partitioned parameter, a collective rank 1 (already in the final barrier) never
joins (20 s process-group timeout)."""
from datetime import timedelta  # noqa: I001 - kept as the case ran (its log's line numbers)

import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(5):
    loss = engine(torch.randn(2, 256)).pow(2).mean()
    engine.backward(loss)
    engine.step()
if engine.global_rank == 0:
    engine.save_16bit_model("export")
torch.distributed.barrier()

"""A user's own DeepSpeed script for one GPU (tests/gpu/test_gpu_user_script.py), as the recipe's users
write them: its own argparse with DeepSpeed's config arguments, `deepspeed.initialize`, a tiny model on
whatever device DeepSpeed picks, one line for metrics (`dscluster.log`) and dscluster's committed
checkpoints. `--hang-collective` instead hangs an NCCL all-reduce on purpose (the GPU is kept busy by a
spin kernel queued before it): the collective times out after `--timeout` seconds and PyTorch's NCCL
flight recorder dumps its record, as on a real hang.
"""

import argparse
import datetime
import json

import deepspeed
import torch

import dscluster
import dscluster.checkpoint as ckpt

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--save-every", type=int, default=3)
parser.add_argument("--hang-collective", action="store_true")
parser.add_argument("--timeout", type=float, default=10.0)
parser.add_argument("--cpu-batch-at", type=int, default=-1, help="a user's bug: this step's batch stays on the CPU")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

if args.hang_collective:
    deepspeed.init_distributed(dist_backend="nccl", timeout=datetime.timedelta(seconds=args.timeout))
    torch.cuda.set_device(0)
    x = torch.ones(1024, device="cuda")
    torch.distributed.all_reduce(x)  # the communicator forms and one collective completes
    torch.cuda.synchronize()
    print("first all_reduce done", flush=True)
    # GPU spin for 6 timeouts (cycles at ~2 GHz): the next collective cannot start before the watchdog
    # times it out; should the watchdog not end the process, the spin ends and the script fails loudly.
    torch.cuda._sleep(int(2e9 * 6 * args.timeout))
    torch.distributed.all_reduce(x)
    torch.cuda.synchronize()  # never returns: the watchdog times the collective out first
    raise SystemExit("the hung collective completed")

with open(args.deepspeed_config) as f:
    config = json.load(f)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
resumed = ckpt.load_latest(engine)
start = resumed.step if resumed else 0
dtype = torch.bfloat16 if config.get("bf16", {}).get("enabled") else torch.float32
for step in range(start, args.steps):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(engine.train_micro_batch_size_per_gpu(), 64, generator=g)
    x = x.to(dtype) if step + 1 == args.cpu_batch_at else x.to(engine.device, dtype)
    loss = (engine(x).float() - x.float().sum(dim=1, keepdim=True)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    dscluster.log(step=step + 1, loss=loss, device=str(engine.device))
    print(f"step {step + 1} loss {loss.item():.4f} on {engine.device}", flush=True)
    if (step + 1) % args.save_every == 0 or step + 1 == args.steps:
        print(f"committed {ckpt.save(engine, step + 1).name}", flush=True)
torch.distributed.destroy_process_group()
print("done", flush=True)

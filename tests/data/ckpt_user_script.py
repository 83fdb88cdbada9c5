"""A user's own DeepSpeed script that commits its checkpoints through dscluster's public API.

Tiny MLP, ZeRO stage from --stage, CPU/gloo. Each step's batch is drawn from a generator seeded by
the step, so a resumed run sees the same data as one that never stopped. `--fail-at N` kills rank 1
(SIGKILL) in the first attempt only, after step N and before its save; `--no-resume` saves but never calls
load_latest (a script that does not resume: status must say so).
"""

import argparse
import os
import signal
import sys
import time

import deepspeed
import torch

import dscluster.checkpoint as ckpt

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--save-every", type=int, default=2)
parser.add_argument("--keep", type=int, default=2)
parser.add_argument("--stage", type=int, default=1)
parser.add_argument("--fail-at", type=int, default=-1)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--no-resume", action="store_true")
parser.add_argument("--mode", default="sync", choices=("sync", "async"))
args = parser.parse_args()

config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "Adam", "params": {"lr": 0.01, "torch_adam": True}}, "zero_optimization": {"stage": args.stage}}
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
rank = int(os.environ.get("RANK", "0"))

start = 0
if not args.no_resume:
    resumed = ckpt.load_latest(engine)
    if resumed:
        start = resumed.step
        print(f"resumed from step-{resumed.step} (saved at {resumed.client_state.get('saved_at')})", flush=True)
for step in range(start, args.steps):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(4, 8, generator=g)
    loss = (engine(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    print(f"step {step + 1} loss {loss.item():.6f}", flush=True)
    if step + 1 == args.fail_at and os.environ.get("DSCLUSTER_ATTEMPT") == "1":
        # The kill tests the resume from the last committed step: an async save of the previous step is
        # let commit first on every rank (a kill during the background write is tests/integration's).
        ckpt.wait()
        torch.distributed.barrier()
    if step + 1 == args.fail_at and rank == 1 and os.environ.get("DSCLUSTER_ATTEMPT") == "1":
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer or an operator would
    if (step + 1) % args.save_every == 0 or step + 1 == args.steps:
        path = ckpt.save(engine, step + 1, keep=args.keep, client_state={"saved_at": time.time()}, mode=args.mode)
        print(f"{'saving' if args.mode == 'async' else 'committed'} {path.name}", flush=True)
    time.sleep(args.sleep)
ckpt.wait()
torch.distributed.destroy_process_group()
print("done", flush=True)
# Without Python's finalization: a gloo thread still releasing ZeRO's tensors then aborts the rank at exit (exit-abort).
mpi = sys.modules.get("mpi4py.MPI")  # started by MPI (DeepSpeed's openmpi/mpich launchers): mpirun wants MPI_Finalize
if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
    mpi.Finalize()
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)

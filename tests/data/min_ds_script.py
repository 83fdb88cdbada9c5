"""A user's own minimal DeepSpeed script (not the reference trainer): launch must run any script.

Trains a tiny MLP with ZeRO-2 on CPU/gloo; with --save-dir it checkpoints every step and resumes from
the newest one (so a supervised restart continues). Prints `step N loss X` on every rank.
"""

import argparse
import json
import os
import sys
import time

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--fail-at", type=int, default=-1)
parser.add_argument("--log-loss", action="store_true", help="the one line a script adds to chart its loss")
parser.add_argument("--raise-at", type=int, default=-1, help="raise the user's own error after this step")
parser.add_argument("--raise-rank", type=int, default=0)
parser.add_argument("--raise", dest="raise_type", default="TypeError", choices=["TypeError", "RuntimeError", "TimeoutError"])
parser.add_argument("--hang-file", default=None, help="while this file exists, --hang-rank sleeps in Python "
                    "between two steps: a live rank its peers wait for in their next collective")
parser.add_argument("--hang-rank", type=int, default=0)
parser.add_argument("--abort-at-exit-rank", type=int, default=-1, help="after training, this rank ends in "
                    "std::terminate with no exception, as a thread still running at exit makes it")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

config = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "SGD", "params": {"lr": 0.05}}, "zero_optimization": {"stage": 0}}
if args.deepspeed_config:
    with open(args.deepspeed_config) as f:
        config = json.load(f)
    args.deepspeed_config = None



def bad_batch(kind: str) -> None:
    """A user's own bug, in their own code (the frame a failure explanation must point at)."""
    if kind == "TypeError":
        return torch.ones(2) + "1"
    if kind == "TimeoutError":  # of a kind that passes: a restart may help
        raise TimeoutError("the data server did not answer within 30 s")
    raise RuntimeError("the data loader returned an empty batch")


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
rank = int(os.environ.get("RANK", "0"))
print(f"rank {rank} of {os.environ.get('WORLD_SIZE')} on {os.uname().nodename} run {os.environ.get('DSCLUSTER_RUN_ID')}",
      flush=True)
if os.environ.get("HF_TOKEN"):  # the secret's length only: its value must appear in no log
    print(f"HF_TOKEN has {len(os.environ['HF_TOKEN'])} characters", flush=True)
for step in range(args.steps):
    x = torch.randn(2, 8)
    loss = (engine(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
    if args.log_loss:
        import dscluster

        dscluster.log(step=engine.global_steps, loss=loss)
    if step == args.fail_at and rank == 0:
        raise SystemExit(3)
    if step == args.raise_at and rank == args.raise_rank:
        bad_batch(args.raise_type)
    if args.hang_file and rank == args.hang_rank and os.path.exists(args.hang_file):
        print(f"hanging at {time.time():.3f}", flush=True)
        time.sleep(3600)
    time.sleep(args.sleep)
# A clean exit, the way dscluster's explanation of an abort at exit (exit-abort) says: destroy the process group,
# then leave without Python's finalization. destroy_process_group() alone is not enough while DeepSpeed holds
# ZeRO's groups: seen in CI, a gloo worker thread released a finished all-gather's tensors only once Python was
# finalizing and the rank aborted ("terminate called without an active exception", exit 134).
torch.distributed.destroy_process_group()
print("done", flush=True)
if rank == args.abort_at_exit_rank:
    # What a process-group thread still running when the script returns does (PyTorch's race at exit): libstdc++'s
    # std::terminate with no exception in flight prints "terminate called without an active exception" and aborts.
    import ctypes

    ctypes.CDLL("libstdc++.so.6")._ZSt9terminatev()
mpi = sys.modules.get("mpi4py.MPI")  # started by MPI (DeepSpeed's openmpi/mpich launchers): mpirun wants MPI_Finalize
if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
    mpi.Finalize()
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)

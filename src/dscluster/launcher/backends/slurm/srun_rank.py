"""One rank under Slurm: what `srun` starts on every node for DeepSpeed's Slurm launcher.

DeepSpeed's SlurmRunner runs `srun ... python -u SCRIPT ARGS` directly, without its launch.py, so
nothing sets the variables torch.distributed and DeepSpeed read (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT) and nothing passes `--local_rank`. This file is that SCRIPT: it derives
them from what Slurm gives every task (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, ...)
and the rendezvous address the supervisor exported, then runs the user's program in this process,
as `python SCRIPT` or `python -m MODULE` would.

Usage (the slurm backend's program_prefix): srun_rank.py [--module] PROGRAM [ARGS...]
It is run by path and imports nothing from dscluster: the ranks need only the standard library here.
"""

from __future__ import annotations

import os
import runpy
import sys


def tasks_on_this_node(env: dict[str, str]) -> int:
    """SLURM_NTASKS_PER_NODE when set, else this node's entry of SLURM_TASKS_PER_NODE ("2(x3),1")."""
    if env.get("SLURM_NTASKS_PER_NODE", "").isdigit():
        return int(env["SLURM_NTASKS_PER_NODE"])
    counts: list[int] = []
    for part in env.get("SLURM_TASKS_PER_NODE", "1").split(","):
        num, _, rep = part.partition("(x")
        counts += [int(num)] * (int(rep.rstrip(")")) if rep else 1)
    node = int(env.get("SLURM_NODEID", "0"))
    return counts[node] if node < len(counts) else counts[-1]


def rank_env(env: dict[str, str]) -> dict[str, str]:
    """The torch.distributed variables of this task (pure: from the task's environment)."""
    missing = [k for k in ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID") if k not in env]
    if missing:
        raise SystemExit(f"srun_rank: {', '.join(missing)} not set: this runs only as a task started by srun")
    out = {"RANK": env["SLURM_PROCID"], "WORLD_SIZE": env["SLURM_NTASKS"], "LOCAL_RANK": env["SLURM_LOCALID"],
           "LOCAL_SIZE": str(tasks_on_this_node(env)), "LOCAL_WORLD_SIZE": str(tasks_on_this_node(env)),
           "CROSS_RANK": env.get("SLURM_NODEID", "0"), "CROSS_SIZE": env.get("SLURM_NNODES", "1")}
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        value = env.get(f"DSCLUSTER_{name}") or env.get(name)
        if not value:
            raise SystemExit(f"srun_rank: DSCLUSTER_{name} not set (the supervisor exports it)")
        out[name] = value
    return out


def main(argv: list[str]) -> None:
    module = argv[:1] == ["--module"]
    if module:
        argv = argv[1:]
    if not argv:
        raise SystemExit("usage: srun_rank.py [--module] PROGRAM [ARGS...]")
    os.environ.update(rank_env(dict(os.environ)))
    program, args = argv[0], argv[1:] + [f"--local_rank={os.environ['LOCAL_RANK']}"]  # as DeepSpeed's launch.py
    if module:
        sys.argv = [program, *args]
        sys.path[0] = os.getcwd()
        runpy.run_module(program, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [program, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(program))
        runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])

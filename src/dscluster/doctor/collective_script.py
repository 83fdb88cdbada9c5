"""Runs on every node for `doctor --collective` (sent to `python -` on stdin): one process per
slot joins a torch.distributed group across all nodes and all-reduces a buffer.

Rank 0 prints `DSCLUSTER-COLLECTIVE <json>` with the timing; every node's parent prints its exit
status. gloo on CPU, NCCL on GPU; the interface comes from GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME,
which doctor sets to the one routing to the master.
"""

import json
import multiprocessing as mp
import sys
import time
from datetime import timedelta

MARKER = "DSCLUSTER-COLLECTIVE "


def rank_main(p, local_rank, queue):
    try:
        import torch
        import torch.distributed as dist
        rank = p["rank_offset"] + local_rank
        gpu = p["backend"] == "nccl"
        if gpu:
            torch.cuda.set_device(local_rank)
        dist.init_process_group(p["backend"], init_method="tcp://%s:%d" % (p["master_address"], p["master_port"]),
                                rank=rank, world_size=p["world_size"], timeout=timedelta(seconds=p["init_timeout_s"]))
        device = torch.device("cuda", local_rank) if gpu else torch.device("cpu")
        numel = max(1, int(p["size_mb"] * 1024 * 1024 / 4))
        check = torch.full((8,), float(rank + 1), device=device)
        dist.all_reduce(check)
        world = p["world_size"]
        correct = bool(check[0].item() == world * (world + 1) / 2)
        buf = torch.ones(numel, dtype=torch.float32, device=device)
        for _ in range(p["warmup"]):
            dist.all_reduce(buf)
        if gpu:
            torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(p["iters"]):
            dist.all_reduce(buf)
        if gpu:
            torch.cuda.synchronize()
        elapsed = (time.perf_counter() - t0) / p["iters"]
        times = [None] * world
        dist.all_gather_object(times, elapsed)
        dist.destroy_process_group()
        if rank == 0:
            slowest = max(times)
            algbw = numel * 4 / slowest / 1e9
            busbw = algbw * 2 * (world - 1) / world
            print(MARKER + json.dumps({"world_size": world, "backend": p["backend"], "size_mb": p["size_mb"],
                                       "time_ms": slowest * 1e3, "algbw_gbs": algbw, "busbw_gbs": busbw,
                                       "correct": correct}), flush=True)
        queue.put((local_rank, 0 if correct else 3, ""))
    except Exception as err:  # noqa: BLE001 - report the rank's error to the parent, then fail
        queue.put((local_rank, 1, "%s: %s" % (type(err).__name__, str(err)[:400])))


def main(argv):
    p = json.loads(argv[1])
    ctx = mp.get_context("fork")  # the source came on stdin: children must inherit it, not re-import it
    queue = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(p, i, queue)) for i in range(p["slots"])]
    for proc in procs:
        proc.start()
    errors = []
    deadline = time.time() + p["init_timeout_s"] + 60
    for proc in procs:
        proc.join(max(0.1, deadline - time.time()))
    while not queue.empty():
        local_rank, code, msg = queue.get()
        if code:
            errors.append("rank %d: %s" % (p["rank_offset"] + local_rank, msg or "wrong all-reduce result"))
    for proc in procs:
        if proc.is_alive():
            proc.kill()
            errors.append("rank %d: did not finish" % p["rank_offset"])
        elif proc.exitcode:
            errors.append("rank process exited with %s" % proc.exitcode)
    if errors:
        sys.stderr.write("\n".join(errors) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

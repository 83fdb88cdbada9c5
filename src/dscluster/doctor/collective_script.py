"""Runs on every node for `doctor --collective` (sent to `python -` on stdin): one process per
slot joins a torch.distributed group across all nodes and all-reduces a buffer, then measures every
link on its own: each pair of nodes (their first ranks, round-robin rounds so that each node is in one
pair per round, as in a tournament) and, inside a node with several slots, its first rank with each
other local rank (GPU 0 with GPU j). A pair exchanges a buffer both ways (send then receive) `iters`
times; its figure is the bytes moved per second.

Rank 0 prints `DSCLUSTER-COLLECTIVE <json>` with the timing and every link's figure; every node's
parent prints its exit status. gloo on CPU, NCCL on GPU; the interface comes from
GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME, which doctor sets to the one routing to the master.
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
        links = measure_links(p, rank, device, gpu)
        gathered = [None] * world
        dist.all_gather_object(gathered, links)
        dist.destroy_process_group()
        if rank == 0:
            slowest = max(times)
            algbw = numel * 4 / slowest / 1e9
            busbw = algbw * 2 * (world - 1) / world
            print(MARKER + json.dumps({"world_size": world, "backend": p["backend"], "size_mb": p["size_mb"],
                                       "time_ms": slowest * 1e3, "algbw_gbs": algbw, "busbw_gbs": busbw,
                                       "correct": correct, "link_mb": p.get("link_mb"),
                                       "links": [x for part in gathered for x in part or ()]}), flush=True)
        queue.put((local_rank, 0 if correct else 3, ""))
    except Exception as err:  # noqa: BLE001 - report the rank's error to the parent, then fail
        queue.put((local_rank, 1, "%s: %s" % (type(err).__name__, str(err)[:400])))


def pair_rounds(n):
    """Round-robin rounds over n nodes (the circle method): every pair once, each node in at most one
    pair per round, so a round's pairs run at once without sharing a node's link."""
    idx = list(range(n)) + ([None] if n % 2 else [])
    m = len(idx)
    rounds = []
    for _ in range(m - 1):
        pairs = [(idx[i], idx[m - 1 - i]) for i in range(m // 2)]
        rounds.append([(min(a, b), max(a, b)) for a, b in pairs if a is not None and b is not None])
        idx = [idx[0], idx[-1]] + idx[1:-1]
    return rounds


def exchange(dist, buf, peer, first, iters, sync=None):
    """Send then receive (or the reverse) `iters` times with one peer; the fastest round trip's seconds
    (the link's capability: a busy CPU or a scheduler hiccup only slows some round trips, a slow link
    every one)."""
    best = None
    for _ in range(iters):
        t0 = time.perf_counter()
        if first:
            dist.send(buf, peer)
            dist.recv(buf, peer)
        else:
            dist.recv(buf, peer)
            dist.send(buf, peer)
        if sync:
            sync()
        took = time.perf_counter() - t0
        best = took if best is None else min(best, took)
    return best


def measure_links(p, rank, device, gpu):
    """This rank's share of the link figures: [{"kind", "a", "b", "gbs", "seconds"}] for the pairs it led."""
    import torch
    import torch.distributed as dist

    slots = p.get("node_slots") or []
    if not p.get("link_mb") or not slots:
        return []
    offsets = [sum(slots[:i]) for i in range(len(slots))]
    numel = max(1, int(p["link_mb"] * 1024 * 1024 / 4))
    buf = torch.ones(numel, dtype=torch.float32, device=device)
    warm = torch.ones(1, dtype=torch.float32, device=device)
    iters = int(p.get("link_iters") or 3)
    mine = []
    plan = [("node", pairs) for pairs in pair_rounds(len(slots))]
    plan += [("gpu", [(i, j) for i in range(len(slots)) if slots[i] > j]) for j in range(1, max(slots))]
    for kind, pairs in plan:
        for a, b in pairs:
            ra, rb = (offsets[a], offsets[b]) if kind == "node" else (offsets[a], offsets[a] + b)
            if rank not in (ra, rb):
                continue
            peer = rb if rank == ra else ra
            sync = torch.cuda.synchronize if gpu else None
            exchange(dist, warm, peer, rank == ra, 1, sync)  # the connection, before the clock
            seconds = exchange(dist, buf, peer, rank == ra, iters, sync)
            if rank == ra:
                entry = {"kind": kind, "a": a, "b": b, "seconds": seconds, "gbs": 2 * numel * 4 / seconds / 1e9}
                if kind == "gpu":
                    entry.update(node=a, a=0, b=b)
                mine.append(entry)
        dist.barrier()
    return mine


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

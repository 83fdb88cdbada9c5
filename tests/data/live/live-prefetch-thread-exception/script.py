"""The user loads batches in a background thread that puts them on a queue; the loader thread raises (it reads a
shard that is not there) and dies with only threading's "Exception in thread" message; the training loop then waits
on the queue and gives up after its timeout (queue.Empty)."""
import queue
import threading

import torch
import torch.distributed as dist


def loader(shards, out):
    for shard in shards:
        with open(shard) as f:
            out.put(torch.tensor([float(x) for x in f.read().split()]))


def main():
    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()
    batches = queue.Queue(maxsize=4)
    threading.Thread(target=loader, args=([f"shard-{rank}-{i}.txt" for i in range(10)], batches),
                     daemon=True).start()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
    for _ in range(10):
        batch = batches.get(timeout=15)
        model(batch.view(-1, 16)).sum().backward()


if __name__ == "__main__":
    main()

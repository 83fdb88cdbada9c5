"""Each rank starts a preprocessing process that tokenizes and puts tensors on a torch.multiprocessing Queue, then
exits. torch shares a tensor put on a queue through its producer (a file descriptor served by that process), so the
producer must stay alive until the consumer has received it; here it returns at once, and the main process gets the
tensors after it has gone."""
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def produce(q, n):
    for i in range(n):
        q.put(torch.full((256,), i, dtype=torch.long))
    # the mistake: the producer returns right away, while its tensors are still on the queue


def main():
    dist.init_process_group(backend="gloo")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=produce, args=(q, 8))
    p.start()
    p.join()  # wait for preprocessing to finish before training
    time.sleep(1)
    batches = [q.get(timeout=30) for _ in range(8)]
    print(dist.get_rank(), torch.stack(batches).sum().item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""The user starts a checkpoint-uploader process with the spawn start method (safer with threads, they read) and its
target is a function defined inside main(): spawn pickles the target, and a local object cannot be pickled."""
import multiprocessing as mp

import torch
import torch.distributed as dist


def main():
    dist.init_process_group(backend="gloo")
    out_dir = "ckpt"

    def uploader(queue):
        while (path := queue.get()) is not None:
            print("uploading", path, "to", out_dir)

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=uploader, args=(queue,), daemon=True)
    proc.start()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
    model(torch.randn(8, 16)).sum().backward()
    queue.put(None)
    proc.join()


if __name__ == "__main__":
    main()

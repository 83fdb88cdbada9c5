"""The user sets the start method at the top of the script (from one tutorial) and again in main() (from another):
the second call raises "context has already been set"."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

mp.set_start_method("spawn")


def main():
    mp.set_start_method("forkserver")
    dist.init_process_group(backend="gloo")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
    model(torch.randn(8, 16)).sum().backward()


if __name__ == "__main__":
    main()

"""The user normalizes the samples in a multiprocessing.Pool and passes it a lambda: Pool.map pickles the function to
send it to the workers, and a lambda cannot be pickled."""
import multiprocessing as mp

import torch
import torch.distributed as dist


def main():
    dist.init_process_group(backend="gloo")
    samples = [torch.randn(16) for _ in range(64)]
    mean = 0.5
    with mp.Pool(2) as pool:
        samples = pool.map(lambda x: x - mean, samples)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
    model(torch.stack(samples)).sum().backward()


if __name__ == "__main__":
    main()

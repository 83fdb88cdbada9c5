"""The user's data prep parses records in a ProcessPoolExecutor; one record has no "label" field and the worker's
KeyError comes back to the main process through future.result() (the remote traceback)."""
from concurrent.futures import ProcessPoolExecutor

import torch
import torch.distributed as dist


def parse(record):
    return torch.tensor(record["features"]), record["label"]


def main():
    dist.init_process_group(backend="gloo")
    records = [{"features": [float(i)] * 16, "label": i % 2} for i in range(32)]
    records.append({"features": [0.0] * 16})  # a malformed record in the user's data
    with ProcessPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(parse, r) for r in records]
        data = [f.result() for f in futures]
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 2))
    print("records", len(data), model)


if __name__ == "__main__":
    main()

"""A training CLI written with click; it reads its rank from LOCAL_RANK and declares no --local_rank option, which
the launcher passes to every rank, so click rejects it."""
import os

import click
import torch
import torch.distributed as dist


@click.command()
@click.option("--epochs", type=int, default=2)
@click.option("--lr", type=float, default=1e-2)
def main(epochs, lr):  # the mistake: no --local_rank option
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _epoch in range(epochs):
        loss = model(torch.randn(4, 8)).pow(2).mean() * (local_rank + 1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

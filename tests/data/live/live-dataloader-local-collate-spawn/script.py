"""The user moved DataLoader workers to the spawn start method (advice against CUDA-after-fork errors) and keeps
the collate function defined inside main(): spawn pickles it for each worker, and a local function cannot be pickled."""
import argparse

import deepspeed
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(4, 4)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    ds = TensorDataset(torch.randn(64, 4), torch.randn(64, 4))

    def collate(batch):
        xs, ys = zip(*batch)
        return torch.stack(xs), torch.stack(ys)

    loader = DataLoader(ds, batch_size=2, num_workers=2, collate_fn=collate, multiprocessing_context="spawn")
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()


if __name__ == "__main__":
    main()

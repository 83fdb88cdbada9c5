"""The user's autoencoder logs its reconstructions to TensorBoard every few steps (rank 0), passing the whole
batch (N, C, H, W) to add_image, which takes one image (add_images takes a batch)."""
import argparse

import deepspeed
import torch
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 3 * 8 * 8), torch.nn.Sigmoid(), torch.nn.Unflatten(1, (3, 8, 8)))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
writer = SummaryWriter("runs/ae") if engine.global_rank == 0 else None
for step in range(10):
    images = torch.rand(4, 3, 8, 8)
    recon = engine(images)
    loss = torch.nn.functional.mse_loss(recon, images)
    engine.backward(loss)
    engine.step()
    if writer is not None and step % 5 == 4:
        writer.add_scalar("train/loss", loss.item(), step)
        writer.add_image("reconstructions", recon.detach(), step)

"""A small CNN for 28x28 images under DeepSpeed. The user computed the classifier's in_features as if the 3x3
convolution kept the image at 28x28 (it has no padding: 26x26), so the flattened features do not fit the Linear."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, kernel_size=3),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 28 * 28, 10),  # the mistake: the conv output is 4 x 26 x 26
)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):  # noqa: B007 - kept as captured
    x, y = torch.randn(2, 1, 28, 28), torch.randint(0, 10, (2,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

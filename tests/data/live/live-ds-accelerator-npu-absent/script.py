"""The script comes from the user's Ascend NPU cluster, where its first lines select DeepSpeed's NPU accelerator;
run on a machine without torch_npu."""
import argparse
import os

os.environ["DS_ACCELERATOR"] = "npu"  # the mistake: this machine has no NPU (torch_npu not installed)

import deepspeed  # noqa: E402
import torch  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = torch.nn.Linear(8, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    loss = engine(torch.randn(2, 8)).sum()
    engine.backward(loss)
    engine.step()

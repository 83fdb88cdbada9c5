"""Distillation with two DeepSpeed engines: the student from --deepspeed_config, the teacher with its own inference
config dict, passing the same argparse args to both deepspeed.initialize calls."""
import argparse

import deepspeed
import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
student = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
engine, _, _, _ = deepspeed.initialize(args=args, model=student, model_parameters=student.parameters())
teacher_cfg = {"train_batch_size": 4, "train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 0}}
teacher.requires_grad_(False)
t_engine, _, _, _ = deepspeed.initialize(args=args, model=teacher, config=teacher_cfg)  # the mistake: args too
t_engine.eval()
for step in range(5):  # noqa: B007
    x = torch.randn(2, 16)
    with torch.no_grad():
        t_logits = t_engine(x)
    loss = F.kl_div(F.log_softmax(engine(x), -1), F.softmax(t_logits, -1), reduction="batchmean")
    engine.backward(loss)
    engine.step()

"""Knowledge distillation with DeepSpeed: the user halves the teacher's memory with teacher.to(torch.bfloat16) (on CPU,
'bf16 is fine for inference') while the student trains in float32, and feeds both the same float32 batch."""
import argparse

import deepspeed
import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)
teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
student = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
teacher = teacher.to(torch.bfloat16).eval().requires_grad_(False)  # the mistake: the batch stays float32
engine, _, _, _ = deepspeed.initialize(args=args, model=student, model_parameters=student.parameters())
for step in range(5):  # noqa: B007
    x = torch.randn(2, 16)
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = engine(x)
    loss = F.kl_div(F.log_softmax(s_logits / 2.0, -1), F.softmax(t_logits / 2.0, -1), reduction="batchmean")
    engine.backward(loss)
    engine.step()

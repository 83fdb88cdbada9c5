"""The user profiles a few training steps with torch.profiler, the tutorial's tensorboard_trace_handler as on_trace_ready,
and also wants a Chrome trace per rank, so calls prof.export_chrome_trace after the profiled loop: the trace handler
already saved that trace."""
import argparse

import deepspeed
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
             on_trace_ready=tensorboard_trace_handler("./log/profiler")) as prof:
    for _ in range(6):
        loss = engine(torch.randn(4, 16)).pow(2).mean()
        engine.backward(loss)
        engine.step()
        prof.step()
prof.export_chrome_trace(f"trace_rank{engine.global_rank}.json")

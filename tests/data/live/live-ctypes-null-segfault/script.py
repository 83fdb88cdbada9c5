"""The user calls a C helper through ctypes (a fast tokenizer of their own) and passes it a pointer that is NULL:
reading through it crashes the rank with SIGSEGV (ctypes.string_at(0) stands for that native bug). Python prints
no traceback of its own."""
import ctypes
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def tokenize(buf_ptr: int) -> bytes:
    return ctypes.string_at(buf_ptr)  # the native helper's result pointer: NULL when it failed


for step in range(5):
    text = tokenize(0 if step == 2 else ctypes.addressof(ctypes.create_string_buffer(b"hello world")))
    x = torch.randn(8, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

"""The user JIT-builds their own tiny fused op with torch.utils.cpp_extension.load_inline; the C++ source misses a
semicolon."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.cpp_extension import load_inline

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

cpp_src = """
torch::Tensor scaled_add(torch::Tensor a, torch::Tensor b, double s) {
    return a + b * s  // the mistake: missing semicolon
}
"""
ext = load_inline(name="my_fused_ops", cpp_sources=cpp_src, functions=["scaled_add"], verbose=False)

model = DDP(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = ext.scaled_add(model(x), x, 0.5).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

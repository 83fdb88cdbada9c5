"""The user JIT-builds their own tiny fused op with torch.utils.cpp_extension.load_inline; it calls a helper declared
in the source but whose definition lives in a .cpp file they did not pass to the build."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.cpp_extension import load_inline

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

cpp_src = """
torch::Tensor fused_scale(torch::Tensor t, double s);  // defined in fused_scale.cpp -- the mistake: not built

torch::Tensor scaled_add(torch::Tensor a, torch::Tensor b, double s) {
    return a + fused_scale(b, s);
}
"""
ext = load_inline(name="my_fused_ops2", cpp_sources=cpp_src, functions=["scaled_add"], verbose=False)

model = DDP(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = ext.scaled_add(model(x), x, 0.5).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

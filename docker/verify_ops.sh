#!/usr/bin/env bash
# The built image checks itself without a GPU (docker/check_image.sh: each op's machine code per
# architecture). This script is the other half, on a real GPU machine without Docker: build DeepSpeed's
# ops exactly as docker/Dockerfile does (same DS_BUILD_* flags and TORCH_CUDA_ARCH_LIST), then load
# them on the GPU with an empty JIT cache (a prebuilt op must never JIT-compile at launch) and take
# one optimizer step with each. Prints the build time and the results.
#   docker/verify_ops.sh [WHEEL_DIR]   # WHEEL_DIR: offline wheels/sdist (deepspeed-*.tar.gz + deps)
# Needs: python with a CUDA torch, nvcc of the same CUDA major, a GPU.
set -euo pipefail
wheels=${1:-}
py=${PYTHON:-python3}
pip_src=(deepspeed==0.19.8)
pip_opts=(--no-cache-dir)
if [ -n "$wheels" ]; then
  pip_opts+=(--no-index --find-links "$wheels")
  pip_src=("$(ls "$wheels"/deepspeed-*.tar.gz)")
  "$py" -m pip install -q "${pip_opts[@]}" py-cpuinfo hjson ninja msgpack psutil tqdm einops nvidia-ml-py pydantic packaging
fi
export DS_BUILD_OPS=0 DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 DS_ENABLE_NINJA=1 \
       TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0" MAX_JOBS=${MAX_JOBS:-$(nproc)}
echo "nvcc: $(nvcc --version | tail -1)"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
start=$(date +%s)
"$py" -m pip install "${pip_opts[@]}" --no-build-isolation --no-deps "${pip_src[@]}" > "${OUT:-/tmp}/ds_build.log" 2>&1 \
  || { tail -40 "${OUT:-/tmp}/ds_build.log"; exit 1; }
echo "deepspeed op build: $(( $(date +%s) - start )) s (TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST, MAX_JOBS=$MAX_JOBS)"
export TORCH_EXTENSIONS_DIR; TORCH_EXTENSIONS_DIR=$(mktemp -d)
"$py" - <<'PY'
import os, time, torch
from deepspeed.ops.op_builder import CPUAdamBuilder, FusedAdamBuilder, UtilsBuilder
for builder in (FusedAdamBuilder(), CPUAdamBuilder(), UtilsBuilder()):
    t = time.time()
    builder.load(verbose=False)
    print(f"op {builder.name}: loaded in {time.time() - t:.2f} s")
from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam
p = torch.nn.Parameter(torch.randn(1 << 20, device="cuda"))
p.grad = torch.randn_like(p)
opt = FusedAdam([p], lr=1e-3); before = p.detach().clone(); opt.step(); torch.cuda.synchronize()
assert not torch.equal(before, p.detach()), "FusedAdam step changed nothing"
q = torch.nn.Parameter(torch.randn(1 << 16)); q.grad = torch.randn_like(q)
before = q.detach().clone(); DeepSpeedCPUAdam([q], lr=1e-3).step()
assert not torch.equal(before, q.detach()), "DeepSpeedCPUAdam step changed nothing"
jit = os.listdir(os.environ["TORCH_EXTENSIONS_DIR"])
assert not jit, f"ops were JIT-compiled at load time: {jit}"
print("prebuilt ops load and step on", torch.cuda.get_device_name(0), "with no JIT")
PY
echo "9.0a check (why the Dockerfile lists 9.0, not 9.0a):"
TORCH_CUDA_ARCH_LIST="9.0a" "$py" -c 'from deepspeed.ops.op_builder import FusedAdamBuilder as B; print(B().compute_capability_args())' 2>&1 | tail -2 || true

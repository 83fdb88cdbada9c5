#!/bin/bash
# Capture the GPU round's cases on a CUDA machine (one GPU is enough), from the repository root:
#   bash tests/data/live-gpu/capture_gpu.sh live-gpu-hardcoded-cuda1 live-gpu-oom-full-vocab-logits ...
# Each named directory under tests/data/live-gpu/ is run with tests/data/live/capture.py as the CPU cases are, one
# after the other, `--local 1` (`--local 2` for a case whose name says two ranks); its log.txt, logs/ and
# supervisor.json are written beside its script, and each directory comes back as $OUT/cases/<case>.tgz when $OUT is
# set (the device entry's machines), written as soon as its case ends: a call cut short keeps the cases before. DeepSpeed and what it needs are installed from wheels in .whl/ where python3 lacks
# them (the device's python3 has torch and transformers, not DeepSpeed, hjson or pydantic): pip download them for
# that python (--python-version, --only-binary) into .whl/ and carry it.
set -u
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import deepspeed, hjson, pydantic" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export TORCH_CUDA_ARCH_LIST=9.0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 DSCLUSTER_HOME=/var/tmp/live-gpu-home DSCLUSTER_SHARED=/var/tmp/live-gpu-shared
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, deepspeed; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'deepspeed', deepspeed.__version__)"
here=tests/data/live-gpu
for c in "$@"; do
  n=1; case $c in *two-ranks*) n=2 ;; esac
  t0=$(date +%s)
  timeout 300 python3 tests/data/live/capture.py --local $n --timeout 200 "$here/$c" -- script.py \
    || echo "capture of $c exited $?"
  echo "== $c: $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('signature'), '|', (d.get('cause') or '')[:200])" "$here/$c/supervisor.json" 2>&1)"
  [ -n "${OUT:-}" ] && mkdir -p "$OUT/cases" && tar czf "$OUT/cases/$c.tgz" "$here/$c"
done
exit 0

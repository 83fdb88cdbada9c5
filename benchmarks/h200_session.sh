#!/usr/bin/env bash
# Prepares a bare H200 machine (the device entry's: wheels carried in .whl/, FlashAttention-4 in two parts) and
# runs GPU benchmarks there:
#   benchmarks/h200_session.sh smoke [OUTDIR]                    # every benchmark kind once, small
#   SUITE=throughput benchmarks/h200_session.sh suite [OUTDIR]   # a named suite of benchmarks/run.py
#   CASES="trainer:preset=1.3b,mb=24;..." benchmarks/h200_session.sh cases [OUTDIR]   # cases after the ceiling
#   benchmarks/h200_session.sh demo | tests | fa4-stash [OUTDIR]
# The commands of every recorded call behind RESULTS.md's figures are in benchmarks/raw/h200_calls.sh.
# Needs: python3 with torch+CUDA+transformers; DeepSpeed and its pure-Python deps either installed or
# as wheels in .whl/ (see RESULTS.md "Reproduce"). Every line of output is also kept in OUTDIR.
set -uo pipefail
phase=${1:?phase: smoke | suite (SUITE=NAME) | cases (CASES=...) | demo | tests | fa4-stash}
out=${2:-${OUT:-/tmp/bench-out}}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import deepspeed" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
# FlashAttention-4 (the fa4 extra) travels in two calls, being larger than one call's carry: phase fa4-stash
# keeps the first part of its CuTe-DSL libraries (.fa4a) on the warm machine; a later call brings the rest
# (.fa4b: the second part, the wheels, the archive's checksum) and installs it all here.
fa4_stash=/var/tmp/fa4-parts
if [ -d .fa4b ] && ! python3 -c "import flash_attn.cute" 2>/dev/null; then
  cat $(for p in aa ab ac; do ls "$fa4_stash"/cu13.part.$p .fa4a/cu13.part.$p .fa4b/cu13.part.$p 2>/dev/null | head -1; done) >/tmp/cu13.tar.xz
  if [ "$(sha256sum /tmp/cu13.tar.xz | cut -d' ' -f1)" = "$(cat .fa4b/cu13.sha256)" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-fa4 .fa4b/*.whl \
      && tar -xJf /tmp/cu13.tar.xz -C /tmp/site-fa4 && rm -f /tmp/cu13.tar.xz
  else
    echo "fa4: the parts do not add up (sha256 differs): the first call's part is gone" >&2
  fi
fi
# Installed now or by an earlier call on this machine; the package's .pth (its DSL's path) is not read
# from PYTHONPATH, so that path is named too.
[ -d /tmp/site-fa4 ] && export PYTHONPATH="/tmp/site-fa4/nvidia_cutlass_dsl/dsl_packages:/tmp/site-fa4${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH="$root/src:$root/benchmarks${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=9.0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/inductor-cache} BENCH_PROF_DIR="$out"
export BENCH_SCRATCH=${BENCH_SCRATCH:-/var/tmp/dscluster-bench} DSCLUSTER_SHARED=${DSCLUSTER_SHARED:-/var/tmp/dscluster-shared}
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}
# A JIT build killed earlier leaves a lock that hangs every later load: nothing builds yet, so drop it.
rm -f ~/.cache/torch_extensions/*/*/lock
# DeepSpeed's FusedAdam is JIT-built on first use (~1 min of CPU): only the phases that use it build it.
build_fused_adam() { python3 -c "from deepspeed.ops.op_builder import FusedAdamBuilder; FusedAdamBuilder().load()" >"$out/fused_adam_build.log" 2>&1 & }
case "$phase" in smoke) build_fused_adam ;; esac
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total --format=csv | tee "$out/gpu.txt"
nvidia-smi topo -m >>"$out/gpu.txt" 2>&1
df -h /var/tmp /tmp >>"$out/gpu.txt" 2>&1
bench="python3 benchmarks/gpu_throughput.py run --out $out/results.jsonl"
demo_out() {  # [suffix]
  { time timeout 120 python3 -c "import sys; from dscluster.cli import main; sys.exit(main())" demo --steps 200 ; } >"$out/demo${1:-}.log" 2>&1
  # The run's record (events, metrics, launcher and rank logs) in one file: where the seconds went.
  run=$(ls -td "$DSCLUSTER_SHARED"/runs/demo-* 2>/dev/null | head -1)
  [ -n "$run" ] && tar czf "$out/demo_run${1:-}.tgz" -C "$run" --exclude=checkpoints --exclude=tensorboard .
}
case "$phase" in
  smoke)
    CUDA_VISIBLE_DEVICES=0 timeout 200 $bench --case ceiling: --case trainer:preset=124m,mb=8,attn=cudnn,steps=3 \
      --case hf:preset=124m,mb=8,steps=3 --case recipe:preset=124m,steps=3 2>&1 | tee "$out/smoke.log" ;;
  fa4-stash)
    # Issue 17, session 6, call 1: only keeps FlashAttention-4's first part on this machine (see above).
    mkdir -p "$fa4_stash" && cp .fa4a/cu13.part.* "$fa4_stash"/ && ls -la "$fa4_stash"
    python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())" ;;
  cases)
    # Any trainer cases after the same run's ceiling: CASES="trainer:...;trainer:..." (session 9's calls 4+);
    # LIMIT caps them (s), TESTS (a pytest -k expression) adds GPU tests after them.
    IFS=';' read -ra cs <<<"${CASES:?CASES=case;case}"; args=(); for c in "${cs[@]}"; do args+=(--case "$c"); done
    timeout "${LIMIT:-540}" $bench --case ceiling: "${args[@]}" >"$out/lane0.log" 2>&1
    echo "lane0 exit $?" >>"$out/lane0.log"
    grep -h '"bench"' "$out/lane0.log" | cut -c1-330; grep -h "exit\|Error" "$out/lane0.log" | tail -5
    # Then, where TESTS names them, GPU tests (pytest's -k expression) on the same machine (session 10).
    if [ -n "${TESTS:-}" ]; then
      timeout "${TESTS_LIMIT:-150}" python3 -m pytest -q -p no:cacheprovider -rA tests/gpu -k "$TESTS" >"$out/pytest_gpu.log" 2>&1
      tail -n 12 "$out/pytest_gpu.log" | grep -v Warning | cut -c1-250
    fi ;;
  tests)
    timeout 400 python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee "$out/pytest_gpu.log" ;;
  suite)
    # A named suite of benchmarks/run.py on this GPU (throughput, checkpoint, kernels, launch): SUITE=NAME.
    timeout "${LIMIT:-540}" python3 benchmarks/run.py "${SUITE:?SUITE=throughput|checkpoint|kernels|launch}" 2>&1 \
      | tee "$out/suite-${SUITE}.log" ;;
  demo)
    # The README's demo on this GPU, timed, with its run record (where the seconds went: RESULTS.md).
    CUDA_VISIBLE_DEVICES=0 demo_out ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
rc=$?
wait  # the FusedAdam build must not be killed half-way (it would leave a lock behind)
python3 benchmarks/gpu_throughput.py summarize "$out/results.jsonl" 2>&1 | tee "$out/summary.md"
ls -la "$out"
exit $rc

#!/usr/bin/env bash
# Issue 42 on one GPU: the HF Trainer script (tests/data/hf_trainer_script.py, a Llama from a config, HF's "auto"
# ZeRO-2 ds_config, bf16) run
#   1. ROUNDS alternating rounds of plain `deepspeed --num_gpus 1` against `dscluster launch --local 1 --attach`,
#      the same command, no fault: the whole command's wall time each, and the ratio of the medians;
#   2. with the output directory set IN THE SCRIPT (OUTPUT_DIR_IN_CODE; no --output_dir on the command line),
#      rank 0 SIGKILLed in the middle of checkpoint-60's save: what `status`, `ckpt` and `ckpt verify` say
#      (tracked, resumed from checkpoint-30, never "started from scratch").
#   benchmarks/hf_clients_gpu.sh [OUTDIR]
# Needs python3 with torch+CUDA+transformers, and DeepSpeed installed or as wheels in .whl/.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-/tmp/hf42-out}}
rounds=${ROUNDS:-2}
cd "$root"
mkdir -p "$out"
tag=hf42
. "$root/benchmarks/hf_gpu_setup.sh"
python3 -c "import torch, transformers, deepspeed; print('torch', torch.__version__, 'transformers', transformers.__version__, 'deepspeed', deepspeed.__version__, torch.cuda.get_device_name(0))"
args=(--deepspeed ds_config.json --per_device_train_batch_size 8 --save_steps 30 --logging_steps 10
      --bf16 --report_to none --learning_rate 3e-4)
secs() { python3 -c "import sys, time; print(f\"{time.time() - float(sys.argv[1]):.1f}\")" "$1"; }
: >"$out/rounds.txt"
plain() {
  t0=$(date +%s.%N)
  python3 -m deepspeed.launcher.runner --num_gpus 1 hf_trainer_script.py --output_dir out_plain --max_steps 60 \
    "${args[@]}" >"$out/plain_$1.log" 2>&1
  rc=$?; echo "round $1 plain deepspeed: exit $rc in $(secs "$t0") s" | tee -a "$out/rounds.txt"
}
dsc() {
  t0=$(date +%s.%N)
  python3 -m dscluster.cli launch --local 1 --attach hf_trainer_script.py --output_dir out_dsc --max_steps 60 \
    "${args[@]}" >"$out/dscluster_$1.log" 2>&1
  rc=$?; echo "round $1 dscluster launch: exit $rc in $(secs "$t0") s" | tee -a "$out/rounds.txt"
}
for r in $(seq 1 "$rounds"); do  # alternating, and which goes first alternates too
  rm -rf out_plain out_dsc
  if [ $((r % 2)) = 1 ]; then plain "$r"; dsc "$r"; else dsc "$r"; plain "$r"; fi
done
python3 - "$out/rounds.txt" <<'PY'
import re, statistics, sys
rows = [l for l in open(sys.argv[1])]
plain = [float(re.search(r"in ([\d.]+) s", l).group(1)) for l in rows if "plain" in l]
dsc = [float(re.search(r"in ([\d.]+) s", l).group(1)) for l in rows if "dscluster" in l]
print(f"median plain {statistics.median(plain):.1f} s, dscluster {statistics.median(dsc):.1f} s, "
      f"ratio {statistics.median(dsc) / statistics.median(plain):.3f}")
PY
rm -rf results
t0=$(date +%s.%N)
python3 -m dscluster.cli launch --local 1 --attach --max-restarts 1 --env KILL_RANK_AT_SAVE=0:60 \
  --env OUTPUT_DIR_IN_CODE=results/llama hf_trainer_script.py --max_steps 90 "${args[@]}" >"$out/in_code.log" 2>&1
echo "output_dir in code, rank 0 killed in checkpoint-60's save: exit $? in $(secs "$t0") s"
run=$(ls -t "$DSCLUSTER_SHARED/runs" | head -1)
python3 -m dscluster.cli status "$run" | tee "$out/status.txt"
python3 -m dscluster.cli ckpt "$run" | tee "$out/ckpt.txt"
python3 -m dscluster.cli ckpt verify "$run" | tee -a "$out/ckpt.txt"
echo "on disk: $(ls results/llama | tr '\n' ' ') torn: $(ls results/llama/.torn 2>/dev/null | tr '\n' ' ')"
grep -q "resumed from checkpoint-30" "$out/status.txt" && ! grep -q "started from scratch" "$out/status.txt" \
  && echo "CHECK status tells the resume: ok" || echo "CHECK status tells the resume: FAILED"

#!/usr/bin/env bash
# Issue 31's Hugging Face case on one GPU: the same Trainer script (tests/data/hf_trainer_script.py, a Llama
# built from a config, random tokens, HF's "auto" ZeRO-2 ds_config) run
#   1. under plain `deepspeed` (the baseline: wall time),
#   2. under `dscluster launch --local 1`, one rank SIGKILLed in the middle of checkpoint-60's save:
#      wall time, `status` after the run, the metrics (loss by step), the checkpoints (checkpoint-60 torn and
#      moved aside, the restart resumed from checkpoint-30 and finished).
#   benchmarks/hf_trainer_h200.sh [OUTDIR]
# Needs python3 with torch+CUDA+transformers+accelerate, and DeepSpeed installed or as wheels in .whl/
# (as benchmarks/h200_session.sh takes them). Prints the figures; keeps every output in OUTDIR.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-/tmp/hf31-out}}
cd "$root"
mkdir -p "$out"
tag=hf31
. "$root/benchmarks/hf_gpu_setup.sh"
args=(--deepspeed ds_config.json --per_device_train_batch_size 8 --max_steps 90 --save_steps 30 --logging_steps 10
      --bf16 --report_to none --learning_rate 3e-4)
t0=$(date +%s.%N)
python3 -m deepspeed.launcher.runner --num_gpus 1 hf_trainer_script.py --output_dir out_plain "${args[@]}" \
  >"$out/plain.log" 2>&1
echo "plain deepspeed: exit $? in $(echo "$(date +%s.%N) - $t0" | bc) s"
t0=$(date +%s.%N)
python3 -m dscluster.cli launch --local 1 --attach --max-restarts 1 --env KILL_RANK_AT_SAVE=0:60 \
  hf_trainer_script.py --output_dir out "${args[@]}" >"$out/dscluster.log" 2>&1
echo "dscluster launch (a rank killed in checkpoint-60's save): exit $? in $(echo "$(date +%s.%N) - $t0" | bc) s"
run=$(ls -t "$DSCLUSTER_SHARED/runs" | head -1)
python3 -m dscluster.cli status "$run" | tee "$out/status.txt"
python3 -m dscluster.cli ckpt "$run" | tee "$out/ckpt.txt"
python3 -m dscluster.cli ckpt verify "$run" | tee -a "$out/ckpt.txt"
echo "torn, moved aside: $(ls out/.torn 2>/dev/null | tr '\n' ' ')"
cp "$DSCLUSTER_SHARED/runs/$run/metrics.jsonl" "$out/metrics.jsonl"
python3 - "$out/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1])]
loss = sorted({r["step"] for r in rows if "loss" in r})
lr = sorted({r["step"] for r in rows if r.get("source") == "deepspeed"})
print(f"metrics: loss at steps {loss}; DeepSpeed's monitor at {len(lr)} steps ({lr[:1]}..{lr[-1:]})")
PY

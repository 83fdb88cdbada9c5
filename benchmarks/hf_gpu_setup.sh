# Sourced by the one-GPU Hugging Face benchmarks (hf_trainer_h200.sh, hf_clients_gpu.sh) from the repository
# root, with $tag set: DeepSpeed from the wheels in .whl/ where it is not installed, the environment, and a fresh
# work folder /var/tmp/$tag-work holding the Trainer script and HF's "auto" ZeRO-2 ds_config; ends in it.
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import deepspeed, accelerate" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=9.0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export DSCLUSTER_SHARED=/var/tmp/$tag-shared DSCLUSTER_HOME=/var/tmp/$tag-home
export MODEL_DIM=${MODEL_DIM:-1024} MODEL_LAYERS=${MODEL_LAYERS:-12} SEQ_LEN=${SEQ_LEN:-1024} N_SAMPLES=${N_SAMPLES:-4096}
rm -f ~/.cache/torch_extensions/*/*/lock
work=/var/tmp/$tag-work
rm -rf "$work" "$DSCLUSTER_SHARED" && mkdir -p "$work" && cp tests/data/hf_trainer_script.py "$work/"
cat >"$work/ds_config.json" <<'JSON'
{
  "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto", "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 2, "overlap_comm": true, "reduce_bucket_size": "auto", "allgather_bucket_size": 5e8}
}
JSON
cd "$work"

"""Turn a user's ds_config into what this trainer hands deepspeed.initialize, saying what it filled in.

Rules (every change is reported on rank 0 as a "config:" line, nothing is silent):
- no config file: micro batch 8, no accumulation;
- no precision section: bf16 on a GPU that supports it; on CPU training is fp32 (bf16/fp16 off);
- no optimizer: AdamW (betas 0.9/0.95, weight decay 0.1) at --lr or the preset's learning rate;
- on CPU an Adam/AdamW optimizer is built as torch.optim.AdamW by the trainer, because DeepSpeed's
  own would JIT-compile a C++ op first (minutes on a small machine);
- on GPU the default optimizer (none in the ds_config) is torch.optim.AdamW(fused=True): measured as
  fast as DeepSpeed's FusedAdam on an H200 (benchmarks/RESULTS.md) and it needs no JIT build, so a
  first run starts in seconds. An optimizer the user names in the ds_config is DeepSpeed's, as written
  (FusedAdam on GPU), and so is the default under ZeRO-Offload, which needs DeepSpeedCPUAdam;
- --lr replaces optimizer.params.lr and the scheduler's warmup_max_lr / cycle_max_lr;
- WarmupDecayLR / WarmupCosineLR without total_num_steps get --steps;
- no gradient_clipping: 1.0; no steps_per_print: effectively never (the trainer logs itself).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

DEFAULT_MICRO_BATCH = 8


@dataclass
class Prepared:
    config: dict
    notes: list[str] = field(default_factory=list)
    torch_adamw: dict | None = None  # kwargs for torch.optim.AdamW when the trainer builds it


def default_config() -> dict:
    return {"train_micro_batch_size_per_gpu": DEFAULT_MICRO_BATCH, "gradient_accumulation_steps": 1}


def prepare_config(user: dict | None, *, device_type: str, bf16_ok: bool, lr: float | None, preset_lr: float,
                   steps: int) -> Prepared:
    cfg = copy.deepcopy(user) if user is not None else default_config()
    out = Prepared(cfg)
    if user is None:
        out.notes.append(f"no --deepspeed_config: micro batch {DEFAULT_MICRO_BATCH} per rank")
    precision = [k for k in ("bf16", "bfloat16", "fp16") if isinstance(cfg.get(k), dict) and cfg[k].get("enabled")]
    if device_type == "cuda":
        if not any(k in cfg for k in ("bf16", "bfloat16", "fp16")) and bf16_ok:
            cfg["bf16"] = {"enabled": True}
            out.notes.append("bf16 enabled (GPU default)")
    elif precision:
        for k in precision:
            cfg[k] = {**cfg[k], "enabled": False}
        out.notes.append(f"CPU: {'/'.join(precision)} disabled, training in fp32")

    opt = cfg.get("optimizer")
    default_optimizer = opt is None
    if opt is None:
        opt = {"type": "AdamW", "params": {"lr": lr or preset_lr, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}}
        cfg["optimizer"] = opt
        out.notes.append(f"optimizer AdamW lr {opt['params']['lr']:g} (default)")
    elif lr is not None:
        opt.setdefault("params", {})["lr"] = lr
        out.notes.append(f"optimizer lr {lr:g} (--lr)")
    sched = cfg.get("scheduler")
    if isinstance(sched, dict):
        params = sched.setdefault("params", {})
        if lr is not None:
            for key in ("warmup_max_lr", "cycle_max_lr"):
                if key in params:
                    params[key] = lr
        if sched.get("type") in ("WarmupDecayLR", "WarmupCosineLR") and "total_num_steps" not in params:
            params["total_num_steps"] = steps
            out.notes.append(f"scheduler total_num_steps {steps} (--steps)")
    if "gradient_clipping" not in cfg:
        cfg["gradient_clipping"] = 1.0
        out.notes.append("gradient_clipping 1.0 (default)")
    cfg.setdefault("steps_per_print", 10**9)

    on_cpu = device_type != "cuda" and str(opt.get("type", "")).lower() in ("adam", "adamw")
    fused_gpu = device_type == "cuda" and default_optimizer and not _offloads_optimizer(cfg)
    if on_cpu or fused_gpu:
        p = opt.get("params", {})
        out.torch_adamw = {"lr": p.get("lr", lr or preset_lr), "betas": tuple(p.get("betas", (0.9, 0.999))),
                           "eps": p.get("eps", 1e-8), "weight_decay": p.get("weight_decay", 0.01)}
        if str(opt["type"]).lower() == "adam" and not p.get("adam_w_mode", True):
            out.torch_adamw["weight_decay"] = 0.0  # plain Adam without decoupled decay; keep it simple
        del cfg["optimizer"]
        if fused_gpu:
            out.torch_adamw["fused"] = True
            out.notes.append("GPU: optimizer built as torch.optim.AdamW(fused=True) (no JIT-compiled op)")
        else:
            out.notes.append("CPU: optimizer built as torch.optim.AdamW (no JIT-compiled op)")
    return out


def _offloads_optimizer(cfg: dict) -> bool:
    offload = (cfg.get("zero_optimization") or {}).get("offload_optimizer") or {}
    return isinstance(offload, dict) and offload.get("device", "none") not in ("none", None)

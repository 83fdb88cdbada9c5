"""What the trainer fills into a ds_config before deepspeed.initialize, per device, always reported."""

from __future__ import annotations

from dscluster.train.dssetup import prepare_config

USER = {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "betas": [0.9, 0.95], "weight_decay": 0.05}},
        "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_num_steps": 10, "warmup_max_lr": 1e-3}}}


def test_cpu_runs_fp32_with_torch_adamw_and_says_so():
    out = prepare_config(USER, device_type="cpu", bf16_ok=False, lr=None, preset_lr=2e-3, steps=50)
    assert out.config["bf16"] == {"enabled": False} and "optimizer" not in out.config
    assert out.torch_adamw == {"lr": 1e-3, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.05}
    assert out.config["scheduler"]["params"]["total_num_steps"] == 50
    assert out.config["gradient_clipping"] == 1.0
    assert any("fp32" in n for n in out.notes) and any("torch.optim.AdamW" in n for n in out.notes)
    assert USER["bf16"] == {"enabled": True} and "total_num_steps" not in USER["scheduler"]["params"]  # not mutated


def test_gpu_keeps_deepspeed_optimizer_and_lr_flag_wins():
    out = prepare_config(USER, device_type="cuda", bf16_ok=True, lr=5e-4, preset_lr=2e-3, steps=50)
    assert out.torch_adamw is None and out.config["optimizer"]["params"]["lr"] == 5e-4
    assert out.config["scheduler"]["params"]["warmup_max_lr"] == 5e-4 and out.config["bf16"] == {"enabled": True}


def test_no_config_gets_defaults():
    gpu = prepare_config(None, device_type="cuda", bf16_ok=True, lr=None, preset_lr=6e-4, steps=10)
    assert gpu.config["bf16"] == {"enabled": True} and "optimizer" not in gpu.config
    assert gpu.torch_adamw == {"lr": 6e-4, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1, "fused": True}
    assert gpu.config["train_micro_batch_size_per_gpu"] == 8
    assert any("fused=True" in n for n in gpu.notes)
    cpu = prepare_config(None, device_type="cpu", bf16_ok=False, lr=None, preset_lr=6e-4, steps=10)
    assert "bf16" not in cpu.config and cpu.torch_adamw["lr"] == 6e-4 and cpu.torch_adamw["weight_decay"] == 0.1


def test_gpu_default_optimizer_under_zero_offload_stays_deepspeeds():
    # ZeRO-Offload steps the optimizer on CPU with DeepSpeedCPUAdam; a torch optimizer would be refused.
    offload = {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    out = prepare_config(offload, device_type="cuda", bf16_ok=True, lr=None, preset_lr=6e-4, steps=10)
    assert out.torch_adamw is None and out.config["optimizer"]["type"] == "AdamW"

"""Helpers to build this project's DeepSpeed config (kept next to train.py so the sweep script can import them)."""
import json


def make_config(micro_batch=4, stage=0, lr=1e-3):
    return {"train_micro_batch_size_per_gpu": micro_batch, "zero_optimization": {"stage": stage},
            "optimizer": {"type": "Adam", "params": {"lr": lr}}}


def write_config(path, **kw):
    with open(path, "w") as f:
        json.dump(make_config(**kw), f, indent=2)

"""A run's Hugging Face Trainer and Accelerate checkpoints as every view lists them (`status`, `dscluster ckpt`,
the panel, the API): the checkpoint folders of every layout (dscluster/ckptlayout.py) in its output
directories, complete or torn (dscluster/hfckpt.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dscluster import fsutil
from dscluster.hfckpt import HfCheckpoint, checkpoints, output_dirs_from_args
from dscluster.runs.records.record import RunRecord

CALLBACK_MARK = "hf_callback"  # <run>/hf_callback: written by dscluster.hf.Callback (its output_dir)


def callback_dirs(run_dir: Path) -> list[Path]:
    """The output directories dscluster.hf.Callback recorded (<run>/hf_callback: one JSON object)."""
    try:
        data = json.loads(fsutil.read_bytes(Path(run_dir) / CALLBACK_MARK, 0, 65536))
    except (OSError, ValueError):
        return []
    value = data.get("output_dir") if isinstance(data, dict) else None
    return [Path(value)] if isinstance(value, str) and os.path.isabs(value) else []


def output_dirs(record: RunRecord, run_dir: Path, more: list[Path] = ()) -> list[Path]:
    """Where the run's program writes its checkpoints: its --output_dir, what dscluster.hf recorded, what the
    supervisor found in its logs (`more`) and saw it write (checkpoint_dirs), and the folder of the last
    complete one it saw."""
    dirs = output_dirs_from_args(record.launch.args, record.launch.cwd)
    last = record.last_hf_checkpoint
    found = [Path(d) for d in record.checkpoint_dirs if os.path.isabs(d)]  # the folders the program wrote
    for d in [*more, *callback_dirs(run_dir), *found, *([Path(last).parent] if last else [])]:
        if d not in dirs:
            dirs.append(d)
    return dirs


def hf_checkpoints(record: RunRecord, run_dir: Path) -> list[HfCheckpoint]:
    """Every checkpoint-N of the run's output directories, oldest first."""
    found = [c for d in output_dirs(record, run_dir) for c in checkpoints(d, record.world_size)]
    return sorted(found, key=lambda c: (c.step, str(c.path)))

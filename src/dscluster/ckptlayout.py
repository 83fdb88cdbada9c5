"""The checkpoint folders Hugging Face's libraries write, by layout, and where a run's program put them,
learned from the folders it wrote (not from its command line).

Layouts (a folder's name, and the folder it sits in):
- `checkpoint-N`: the Trainer's `<output_dir>/checkpoint-N` (N: the global step), and Accelerate scripts
  that name their `save_state` folders the Trainer's way;
- `checkpoint_N` inside a folder named `checkpoints`: Accelerate's automatic naming
  (`ProjectConfiguration(automatic_checkpoint_naming=True)`: `<project_dir>/checkpoints/checkpoint_N`,
  N counting the saves from 0, not steps);
- `step_N` and `epoch_N`: HF's `*_no_trainer.py` example scripts (`--checkpointing_steps N` or `epoch`:
  `accelerator.save_state(<output_dir>/step_N)`).
Every layout but `checkpoint-N` is Accelerate's `save_state` (dscluster.hfckpt judges its completeness by
Accelerate's rules); `checkpoint-N` is the Trainer's unless its files are Accelerate's.

`discover` finds the folders holding such checkpoints under the ranks' directory, among those written since
the run began: an `output_dir` set in the script's code (a TrainingArguments built in code, a config file, a
project_dir) is found from what the program wrote. Stdlib only: the ranks import dscluster.hfckpt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TRAINER, AUTOMATIC, STEPS, EPOCHS = "checkpoint-N", "checkpoints/checkpoint_N", "step_N", "epoch_N"
_LAYOUTS = ((re.compile(r"^checkpoint-(\d+)$"), TRAINER), (re.compile(r"^checkpoint_(\d+)$"), AUTOMATIC),
            (re.compile(r"^step_(\d+)$"), STEPS), (re.compile(r"^epoch_(\d+)$"), EPOCHS))
AUTOMATIC_PARENT = "checkpoints"  # Accelerate's ProjectConfiguration puts checkpoint_N here
# Never searched: hidden folders (.git, .torn, caches), Python's and packages' own trees.
_SKIP = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "wandb"})


def layout(name: str, parent_name: str) -> tuple[str, int] | None:
    """(layout, N) of a folder named `name` inside a folder named `parent_name` (None: not a checkpoint
    folder by any library's naming)."""
    for pattern, kind in _LAYOUTS:
        m = pattern.match(name)
        if m is not None:
            if kind == AUTOMATIC and parent_name != AUTOMATIC_PARENT:
                return None
            return kind, int(m.group(1))
    return None


def is_accelerate_layout(kind: str) -> bool:
    return kind != TRAINER


def discover(root: Path, since: float, *, depth: int = 4, budget: int = 5000,
             skip: tuple[Path, ...] = ()) -> list[Path]:
    """The folders under `root` (to `depth` levels, at most `budget` entries looked at) that hold a checkpoint
    folder of any layout changed at or after `since` (a time.time()): where this run's program saves. Links
    are not followed; checkpoint folders are not searched inside; `skip` (the run's own directory) neither."""
    found: list[Path] = []
    seen = 0
    level = [Path(root)]
    skipped = {str(p) for p in skip}
    for _ in range(depth):
        deeper: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > budget:
                    return found
                if entry.name.startswith(".") or entry.name in _SKIP or entry.path in skipped:
                    continue
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    kind = layout(entry.name, folder.name)
                    if kind is None:
                        deeper.append(Path(entry.path))
                    elif entry.stat(follow_symlinks=False).st_mtime >= since and folder not in found:
                        found.append(folder)
                except OSError:
                    continue
        level = deeper
    return found

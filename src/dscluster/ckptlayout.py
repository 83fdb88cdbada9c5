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


def _checkpoint_folders(root: Path, depth: int, budget: int, skip: tuple[Path, ...]):
    """(the folder holding it, a checkpoint folder of any layout, its mtime) under `root`, to `depth` levels,
    at most `budget` entries looked at. Links are not followed; checkpoint folders are not searched inside;
    `skip` (the run's own directory) neither."""
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
                    return
                if entry.name.startswith(".") or entry.name in _SKIP or entry.path in skipped:
                    continue
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    if layout(entry.name, folder.name) is None:
                        deeper.append(Path(entry.path))
                    else:
                        yield folder, entry.path, entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue
        level = deeper


def snapshot(root: Path, *, depth: int = 4, budget: int = 5000, skip: tuple[Path, ...] = ()) -> dict[str, float]:
    """Every checkpoint folder under `root` with its mtime, as it stands (taken before a run's ranks start:
    what `discover` then leaves out)."""
    return {path: mtime for _, path, mtime in _checkpoint_folders(root, depth, budget, skip)}


def discover(root: Path, since: float, *, depth: int = 4, budget: int = 5000, skip: tuple[Path, ...] = (),
             before: dict[str, float] | None = None) -> list[Path]:
    """The folders under `root` that hold a checkpoint folder of any layout written by this run: with `before`
    (the snapshot taken as the run began), one that was not there then or changed since, whatever the clocks
    of the shared storage say; without it, one changed at or after `since` (a time.time()). Another run
    that saved in the same tree just before (seconds before, within any clock slack) is not this run's."""
    found: list[Path] = []
    for folder, path, mtime in _checkpoint_folders(root, depth, budget, skip):
        new = before.get(path) != mtime if before is not None else mtime >= since
        if new and folder not in found:
            found.append(folder)
    return found

"""An optional one-line callback for Hugging Face Trainer scripts launched by dscluster.

    import dscluster.hf
    trainer = Trainer(..., callbacks=[dscluster.hf.callback()])      # or trainer.add_callback(dscluster.hf.Callback())

Without it a Trainer run is already charted (rank 0's log dicts, runs/records/hflog.py) and its checkpoints are
judged from their files (dscluster/hfckpt.py). With it:
- every logged value (training, eval, the final summary) is recorded at its exact global step
  (metrics.jsonl, TensorBoard), and the log reader stands aside;
- after each save has returned on every rank (a barrier in on_save), rank 0 fsyncs the checkpoint's
  files and writes `checkpoint-N/.dscluster-commit.json` with their sizes: an exact commit marker;
- on_train_begin records what the attempt resumed from (the step the Trainer's state starts at), and the
  output directory, so `status` and `dscluster ckpt` find the checkpoints wherever the script puts them.
Outside a dscluster run (no DSCLUSTER_RUN_DIR) it does nothing, so the script runs unchanged elsewhere.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from transformers import TrainerCallback

from dscluster.hfckpt import PREFIX, write_commit

__all__ = ["Callback", "callback"]
_RENAMED = {"learning_rate": "lr", "eval_loss": "val_loss"}


def _run_dir() -> Path | None:
    value = os.environ.get("DSCLUSTER_RUN_DIR")
    return Path(value) if value else None


def _atomic_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj), encoding="utf-8")
    os.replace(tmp, path)


class Callback(TrainerCallback):
    """dscluster's view of a Trainer run: exact metrics by step, commit markers, resumes."""

    def on_train_begin(self, args, state, control, **kwargs):
        run_dir = _run_dir()
        if run_dir is None or not state.is_world_process_zero:
            return
        try:
            _atomic_json(run_dir / "hf_callback", {"output_dir": str(Path(args.output_dir).absolute()),
                                                   "time": time.time()})
            attempt = os.environ.get("DSCLUSTER_ATTEMPT", "")
            if attempt.isdigit():
                (run_dir / "resumes").mkdir(exist_ok=True)
                step = int(state.global_step or 0)
                _atomic_json(run_dir / "resumes" / f"attempt-{int(attempt)}.json",
                             {"attempt": int(attempt), "step": step or None, "tag": f"{PREFIX}{step}" if step else None,
                              "via": "dscluster.hf", "hf": True, "time": time.time()})
        except OSError:
            pass  # bookkeeping only: never fail a training run over it

    def on_log(self, args, state, control, logs=None, **kwargs):
        if _run_dir() is None or not state.is_world_process_zero or not logs:
            return
        from dscluster.runs.records.metrics import log  # noqa: PLC0415

        values = {}
        for key, value in logs.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[_RENAMED.get(key, key)] = float(value)
        if values:
            log(step=int(state.global_step), **values)

    def on_save(self, args, state, control, **kwargs):
        if _run_dir() is None:
            return
        import torch.distributed as dist  # noqa: PLC0415

        if dist.is_available() and dist.is_initialized():
            dist.barrier()  # every rank's save has returned
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"{PREFIX}{state.global_step}"
            if folder.is_dir():
                write_commit(folder)
        if dist.is_available() and dist.is_initialized():
            dist.barrier()


def callback() -> Callback:
    """`Trainer(callbacks=[dscluster.hf.callback()])`."""
    return Callback()

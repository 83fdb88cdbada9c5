"""A run's metrics: one file (<run>/metrics.jsonl), one reader, and the two ways any script fills it.

- The reference trainer writes it (train/metrics.py), rank 0 only.
- A user's own script writes it with one line, `dscluster.log(step=, loss=, ...)` (see `log` below).
- With no change to the script at all, DeepSpeed's own csv monitor (added to the run's ds_config by
  `dscluster launch` when the user's has no monitor: runs/preparing/prepare.py) writes the learning rate,
  loss scale and step timers under <run>/monitor/; the supervisor copies each new row into
  metrics.jsonl (`MonitorBridge`), with the step derived from DeepSpeed's sample count, and into the
  run's TensorBoard (<run>/tensorboard/deepspeed/, runs/records/tbevents.py).

Everything that shows metrics - the JupyterLab panel, `Run.metrics()`, `dscluster status`, the demo's
progress bar - reads them through `read` / `last` / `latest` here. Stdlib only: it runs inside the ranks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dscluster.fsutil import append_jsonl, open_file, read_jsonl

METRICS_FILE = "metrics.jsonl"
MONITOR_DIR = "monitor"  # DeepSpeed's csv monitor writes <run>/monitor/<job>/*.csv
MONITOR_JOB = "deepspeed"


def read(run_dir: str | os.PathLike, offset: int = 0) -> tuple[list[dict], int]:
    """Complete records since byte `offset`, and the offset to continue from."""
    return read_jsonl(Path(run_dir) / METRICS_FILE, max(0, int(offset)))


def _tail(run_dir: str | os.PathLike, max_bytes: int) -> bytes | None:
    """The last `max_bytes` of metrics.jsonl (None: no file). By fsutil's no-symlink rule: the run dir is
    the node user's to write, its reader may be root."""
    try:
        with os.fdopen(open_file(Path(run_dir) / METRICS_FILE), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            return f.read()
    except OSError:
        return None


def last(run_dir: str | os.PathLike, key: str = "loss", max_bytes: int = 16384) -> dict | None:
    """The last complete record with a numeric `key` (cheap: reads only the file's end)."""
    data = _tail(run_dir, max_bytes)
    if data is None:
        return None
    for raw in reversed(data.split(b"\n")):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and "event" not in rec and isinstance(rec.get(key), (int, float)) \
                and not isinstance(rec.get(key), bool):
            return rec
    return None


def latest(run_dir: str | os.PathLike, max_bytes: int = 16384) -> dict | None:
    """Each value's newest reading, for a one-line summary (`dscluster status`): a user's script writes
    its loss (dscluster.log) and the supervisor DeepSpeed's learning rate and timers as separate records
    of the same steps. `step` is the newest step of any. None: no metrics yet."""
    data = _tail(run_dir, max_bytes)
    if data is None:
        return None
    merged: dict = {}
    for raw in data.split(b"\n"):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or "event" in rec or not isinstance(rec.get("step"), int):
            continue
        step = max(rec["step"], merged.get("step", rec["step"]))
        merged.update(rec)
        merged["step"] = step
    return merged or None


# ---- a user's script: dscluster.log(...) ---------------------------------------------------------
_writer = None


def _plain(value):
    """A tensor or numpy scalar as a Python number; other values as they are."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError, RuntimeError):
            return None
    return value


def log(step: int | None = None, **values) -> bool:
    """Record metrics of a user's script, like `wandb.log`: `dscluster.log(step=step, loss=loss)`.

    Only inside a dscluster run (DSCLUSTER_RUN_DIR is set by the launcher) and only on rank 0 (other
    ranks hold the same averaged values); anywhere else it does nothing, so a script keeps working
    under plain `deepspeed` or `python`. Tensors are converted with `.item()` (a GPU sync: call it
    every N steps, not inside the hot loop). Also written to TensorBoard (<run>/tensorboard/) when
    TensorBoard is installed. Returns whether it was recorded."""
    global _writer
    run_dir = os.environ.get("DSCLUSTER_RUN_DIR")
    if not run_dir or os.environ.get("RANK", "0") != "0":
        return False
    record: dict = {} if step is None else {"step": int(step)}
    for key, value in values.items():
        value = _plain(value)
        if isinstance(value, (int, float, str, bool)) or value is None:
            record[key] = value
    if _writer is None:
        from dscluster.train.metrics import MetricsWriter  # noqa: PLC0415 - TensorBoard only when logging

        _writer = MetricsWriter(Path(run_dir), enabled=True)
    _writer.write(record)
    return True


# ---- the supervisor: DeepSpeed's csv monitor -> metrics.jsonl --------------------------------------
def give_to_ranks(path: Path, owner_uid: int | None) -> None:
    """metrics.jsonl is the ranks' user's (rank 0 appends to it: `dscluster.log`, the reference trainer, a
    Trainer's callback); a supervisor running as root that writes first makes it theirs from its first moment
    (a file root made, then chowned, would refuse rank 0's append in between)."""
    if owner_uid is None or os.geteuid() != 0 or os.geteuid() == owner_uid or os.path.lexists(path):
        return
    from dscluster.sharedlayout import make_file_for  # noqa: PLC0415 - the supervisor's part only

    make_file_for(path, owner_uid)


def monitor_config(run_dir: str | os.PathLike) -> dict:
    """The ds_config section that makes DeepSpeed write its own metrics into the run directory."""
    return {"enabled": True, "output_path": str(Path(run_dir) / MONITOR_DIR), "job_name": MONITOR_JOB}


MONITOR_KEYS = ("tensorboard", "csv_monitor", "wandb", "comet", "aim")


def has_monitor(ds_config: dict) -> bool:
    return any(isinstance(ds_config.get(k), dict) and ds_config[k].get("enabled") for k in MONITOR_KEYS)


class MonitorBridge:
    """Copies new rows of DeepSpeed's csv monitor files into metrics.jsonl, one record per step, and into
    the run's TensorBoard (runs/records/tbevents.py)."""

    def __init__(self, run_dir: Path, train_batch_size: int | str | None, owner_uid: int | None = None,
                 batch_hint=None):
        self.run_dir = Path(run_dir)
        # "auto" (a Hugging Face config): the Trainer fills the batch in; `batch_hint()` finds it (the
        # engine's printed config, runs/records/hflog.py), and rows wait for it (till `final`: then the step is
        # derived from the sample counts' common divisor).
        self.batch = train_batch_size if isinstance(train_batch_size, int) and train_batch_size > 0 else None
        self.batch_hint = batch_hint if self.batch is None and not isinstance(train_batch_size, int) else None
        self.last_step: int | None = None  # the newest step written
        self.owner_uid = owner_uid
        self._offsets: dict[Path, int] = {}
        self._names: dict[Path, str] = {}  # each file's column, from its header row
        self._tb = None

    def tick(self, final: bool = False) -> int:
        """Copy what is new; returns how many records were written."""
        if self.batch is None and self.batch_hint is not None:
            self.batch = self.batch_hint()
        saved = dict(self._offsets)
        rows: dict[int, dict] = {}
        for path in sorted((self.run_dir / MONITOR_DIR).glob("*/*.csv")):
            for samples, name, value in self._new_rows(path):
                rows.setdefault(samples, {})[name] = value
        out = self.run_dir / METRICS_FILE
        if self.batch is None and self.batch_hint is not None and rows:
            # No printed batch: the sample counts' common divisor, once two steps are there (the monitor
            # writes every optimizer step, so two consecutive counts differ by one global batch).
            if len(rows) < 2 and not final:
                self._offsets = saved  # the row waits for the next one
                return 0
            import math

            self.batch = math.gcd(*rows) or None
        batch = self.batch
        if rows:
            give_to_ranks(out, self.owner_uid)
        for samples in sorted(rows):
            step = samples // batch if batch else samples
            self.last_step = step
            append_jsonl(out, {"step": step, "samples": samples, **rows[samples], "source": "deepspeed"})
            self._tensorboard().scalars(step, rows[samples])
        return len(rows)

    def _tensorboard(self):
        if self._tb is None:
            from dscluster.runs.records.tbevents import EventWriter  # noqa: PLC0415 - the ranks never need it

            self._tb = EventWriter(self.run_dir, self.owner_uid)
        return self._tb

    def _new_rows(self, path: Path) -> list[tuple[int, str, float]]:
        offset = self._offsets.get(path, 0)
        try:
            with os.fdopen(open_file(path), "rb") as f:  # the node user's file, read by the supervisor
                f.seek(offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self._offsets[path] = offset + end
        found = []
        text = data[:end].decode("utf-8", "replace")
        for line in text.splitlines():
            parts = line.strip().split(",")
            if len(parts) != 2:
                continue
            if parts[0] == "step":
                self._names[path] = parts[1]
                continue
            try:
                found.append((int(float(parts[0])), self._names.get(path, path.stem), float(parts[1])))
            except ValueError:
                continue
        return found

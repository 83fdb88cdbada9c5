"""A Hugging Face Trainer's rank-0 output -> the run's metrics, and what its attempts resumed from.

With no change to the script, rank 0 of a Trainer prints, at each logging step, a Python dict on its own
line (`{'loss': '10.58', 'grad_norm': '1.262', 'learning_rate': '0.0003', 'epoch': '0.01953'}`: strings
in transformers 5.x, floats in 4.x), the eval dicts (`{'eval_loss': ...}`) and a final train summary
(`{'train_runtime': ..., 'train_loss': ...}`). It prints them through tqdm's `write`, which redraws the
progress bar right after the line: the bar's counter (`| 30/100 [`) is the global step the dict belongs
to (the Trainer updates the bar in on_step_end, before it logs). So the step comes from the counter that
follows a dict; without a progress bar (`disable_tqdm`), from the counter before it, else from the step
DeepSpeed's monitor last wrote (approximate: a script that wants exact steps adds dscluster.hf.Callback(),
which writes its own records and switches this reader off for the run). A dict that holds its own
`step` (or `global_step`), as Accelerate scripts often print, is taken at that step.

What an attempt resumed from: DeepSpeed's load line when its info lines are shown (the Trainer usually
hides them), else the progress bar's first counter against the newest complete checkpoint-K at the
attempt's start (`_first_step`). The same reader watches DeepSpeed's own lines in that log: `Loading checkpoint from .../checkpoint-30/...`
(what an attempt resumed from), `Saving model checkpoint: .../checkpoint-30/...` (where the Trainer's
output directory is), and the engine's `train_batch_size .... 24` (the global batch an "auto" config was
filled with: DeepSpeed's monitor counts samples, the charts count steps).
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

from dscluster.ckptlayout import layout
from dscluster.fsutil import append_jsonl, atomic_write_json, read_bytes
from dscluster.runs.records.metrics import give_to_ranks

HF_KEYS = frozenset({"loss", "grad_norm", "learning_rate", "epoch", "eval_loss", "train_runtime", "train_loss"})
RENAMED = {"learning_rate": "lr", "eval_loss": "val_loss"}  # the names the panel charts
CALLBACK_MARK = "hf_callback"  # <run>/hf_callback: dscluster.hf.Callback writes the metrics itself (runs/views/hfview.py)
# The Trainer's own bar has no description ("Writing model shards: 0/1" and the like are other bars).
_COUNTER = re.compile(r"^\s*\d+%\|[^|]*\|\s*(\d+)/(\d+)\s*\[")
_LOAD = re.compile(r"\b[Ll]oad(?:ing)? (?:checkpoint|model)\b[^\n]*?\bfrom\s+\S*?\b(checkpoint[-_]\d+|step_\d+|epoch_\d+)\b")
_SAVE = re.compile(r"[Ss]aving model checkpoint(?: to|:)\s*(\S*?)/?(checkpoint-\d+)(?:/|\b)")
_BATCH = re.compile(r"\btrain_batch_size \.+ (\d+)\s*$")
# Accelerate's own lines (its logger at INFO, as HF's no_trainer scripts set it up; their own print on resume).
_ACC_SAVE = re.compile(r"\bSaving current state to\s+(\S+)")
_ACC_LOAD = re.compile(r"\b(?:Loading states from|Resumed from checkpoint:)\s+(\S+)")


def parse_dict(line: str) -> dict | None:
    """One of the Trainer's log dicts as numbers (None: not one)."""
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")) or len(text) > 4000:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not (HF_KEYS & set(value)) and not any(
            isinstance(k, str) and k.startswith("eval_") for k in value):
        return None
    out = {}
    for key, raw in value.items():
        if not isinstance(key, str) or isinstance(raw, bool):
            continue
        try:
            out[RENAMED.get(key, key)] = float(raw)
        except (TypeError, ValueError):
            continue
    return out or None


class HfLogBridge:
    """Reads new bytes of every rank-0 log of the run (one file per attempt) on each `tick`."""

    def __init__(self, run_dir: Path, owner_uid: int | None = None, tensorboard=None, cwd: str | None = None):
        self.run_dir = Path(run_dir)
        self.cwd = Path(cwd) if cwd else None  # the ranks' directory: a relative --output_dir is under it
        self.tensorboard = tensorboard  # () -> runs.records.tbevents.EventWriter, shared with the monitor's bridge
        self.owner_uid = owner_uid
        self._offsets: dict[Path, int] = {}
        self._attempt_of: dict[Path, int] = {}
        self._counter: dict[Path, int | None] = {}
        self._pending: dict[Path, list[tuple[dict, int]]] = {}  # (values, ticks waited)
        self._engine_seen: set[Path] = set()  # logs that show DeepSpeed's info lines
        self.output_dirs: list[Path] = []
        self.batch: int | None = None
        self.resumed: dict[int, str | None] = {}  # attempt -> checkpoint-N (None: started from scratch)
        self.expected: dict[int, int | None] = {}  # attempt -> the newest complete checkpoint's step at its start
        self.expected_tag: dict[int, str] = {}  # attempt -> that checkpoint's folder name (checkpoint-N, step_N, ...)
        # attempt -> whether the program's checkpoint folders were known at its start: without them, no
        # checkpoint found is no proof that there was none, and a fresh-looking start is "not known", never
        # "started from scratch"
        self.known: dict[int, bool] = {}
        self._hf_seen: set[int] = set()  # attempts whose log showed a Trainer's or Accelerate's output

    def callback_active(self) -> bool:
        return (self.run_dir / CALLBACK_MARK).exists()

    def tick(self, attempt: int, monitor_step: int | None = None, final: bool = False) -> int:
        """Read what is new; returns how many metric records were written."""
        written = 0
        for path in sorted((self.run_dir / "logs").glob("*_rank0.log")):
            self._attempt_of.setdefault(path, attempt)
            written += self._read(path, monitor_step, final)
        if final and attempt in self._hf_seen and attempt not in self.resumed:
            # Ended without a sign either way: a fresh start is known only where nothing was there to resume from.
            self._record_resume(attempt, None, known=self.known.get(attempt, False) and
                                self.expected.get(attempt) is None)
        return written

    def _read(self, path: Path, monitor_step: int | None, final: bool) -> int:
        offset = self._offsets.get(path, 0)
        try:
            data = read_bytes(path, offset)  # the node user's file: fsutil's no-symlink rule
        except OSError:
            return 0
        # Whole lines, plus a trailing progress bar (tqdm ends its redraws with \r, not \n).
        end = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        self._offsets[path] = offset + end
        pending = self._pending.setdefault(path, [])
        written = 0
        for line in data[:end].decode("utf-8", "replace").splitlines():
            for segment in line.split("\r"):
                written += self._segment(path, segment, pending)
        # Dicts no counter followed: after a tick's wait (or at the attempt's end), the step before them.
        keep = []
        for values, waited in pending:
            step = self._counter.get(path) if self._counter.get(path) is not None else monitor_step
            if (waited >= 1 or final) and step is not None:
                written += self._write(step, values)
            elif final and step is None:
                continue
            else:
                keep.append((values, waited + 1))
        self._pending[path] = keep
        return written

    def _segment(self, path: Path, text: str, pending: list) -> int:
        written = 0
        m = _COUNTER.search(text)
        if m:
            self._hf_seen.add(self._attempt_of.get(path, 0))
            step = int(m.group(1))
            self._counter[path] = step
            if step > 0:
                self._first_step(path, step)
            for values, _ in pending:
                written += self._write(step, values)
            pending.clear()
            return written
        values = parse_dict(text)
        if values is not None:
            self._hf_seen.add(self._attempt_of.get(path, 0))
            self._started(path)
            if self.callback_active():
                return 0
            own = values.pop("step", None) if "global_step" not in values else values.pop("global_step")
            if own is not None and float(own).is_integer() and values:  # a dict that names its step itself
                return self._write(int(own), values)
            if values:
                pending.append((values, 0))
            return 0
        if (m := _LOAD.search(text)) is not None:
            attempt = self._attempt_of.get(path, 0)
            if attempt not in self.resumed:
                self._record_resume(attempt, m.group(1))
            return 0
        if (m := _SAVE.search(text)) is not None and m.group(1):
            folder = Path(m.group(1))
            if not folder.is_absolute() and self.cwd is not None:
                folder = self.cwd / folder
            if folder.is_absolute() and folder not in self.output_dirs:
                self.output_dirs.append(folder)
            return 0
        if (m := _ACC_LOAD.search(text)) is not None or (m := _ACC_SAVE.search(text)) is not None:
            return self._accelerate_line(path, m)
        if (m := _BATCH.search(text)) is not None:
            self.batch = self.batch or int(m.group(1))
            self._engine_seen.add(path)
        return 0

    def _folder(self, text: str) -> Path:
        folder = Path(text.strip("'\"").rstrip("/"))
        return self.cwd / folder if not folder.is_absolute() and self.cwd is not None else folder

    def _accelerate_line(self, path: Path, m: re.Match) -> int:
        """Accelerate's save line names a checkpoint folder (its parent: where the program saves); its load
        line (or a no_trainer script's "Resumed from checkpoint:") the one this attempt resumed from."""
        folder = self._folder(m.group(1))
        if layout(folder.name, folder.parent.name) is None:
            return 0
        if m.re is _ACC_SAVE:
            if folder.parent.is_absolute() and folder.parent not in self.output_dirs:
                self.output_dirs.append(folder.parent)
        elif (attempt := self._attempt_of.get(path, 0)) not in self.resumed:
            self._record_resume(attempt, folder.name, via="Accelerate (rank 0's log)")
        return 0

    def _first_step(self, path: Path, step: int) -> None:
        """The Trainer's bar starts at 0 and jumps to the resumed step + 1 at the first step after a resume.
        With checkpoint-K complete at the attempt's start (`expected`): a first counter above K means it
        resumed from checkpoint-K (a fresh start would have done K+1 steps within tqdm's 0.1 s redraw
        interval); at or below K, it did not. With no checkpoint there, it started from scratch."""
        attempt = self._attempt_of.get(path, 0)
        if attempt in self.resumed:
            return
        expected = self.expected.get(attempt)
        if expected is None:
            self._record_resume(attempt, None, known=self.known.get(attempt, False))
        elif step > expected:
            self._record_resume(attempt, self.expected_tag.get(attempt) or f"checkpoint-{expected}")
        else:
            self._record_resume(attempt, None)

    def _started(self, path: Path) -> None:
        """Training output before any load line: this attempt started from scratch - said only when this
        log shows DeepSpeed's info lines (its engine's printed config), so a load would have shown too."""
        attempt = self._attempt_of.get(path, 0)
        if attempt not in self.resumed and path in self._engine_seen:
            self._record_resume(attempt, None)

    def _record_resume(self, attempt: int, tag: str | None, *, known: bool = True,
                       via: str = "Hugging Face Trainer (rank 0's log)") -> None:
        """What `attempt` resumed from: `tag`, or nothing (`known`: it is known that it started from scratch;
        else whether it resumed is not known)."""
        self.resumed[attempt] = tag
        if attempt < 1:
            return
        kind = layout(tag, "checkpoints") if tag else None
        try:
            folder = self.run_dir / "resumes"
            if not (folder / f"attempt-{attempt}.json").exists():  # the script's own word (dscluster.hf) wins
                folder.mkdir(exist_ok=True)
                atomic_write_json(folder / f"attempt-{attempt}.json",
                                  {"attempt": attempt, "step": kind[1] if kind else None, "tag": tag, "via": via,
                                   "hf": True, "known": bool(tag) or known, "time": time.time()})
        except OSError:
            pass

    def _write(self, step: int, values: dict) -> int:
        out = self.run_dir / "metrics.jsonl"
        give_to_ranks(out, self.owner_uid)
        append_jsonl(out, {"step": int(step), **values, "source": "hf"})
        if self.tensorboard is not None:
            try:
                self.tensorboard().scalars(int(step), values)
            except Exception:  # noqa: BLE001 - TensorBoard is a view; metrics.jsonl is the record
                pass
        return 1

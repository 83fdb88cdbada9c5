"""The supervisor's recording part (`RunBook`): everything a supervision writes, and the state behind it.

It owns the run record (in memory at once, in run.json when the disk takes it, with a reserve for a full disk),
the events, the supervisor's own lines in the launcher log, the metrics (DeepSpeed's monitor rows, a Hugging
Face Trainer's logs) and the Prometheus endpoint that serves them, the newest committed checkpoint (dscluster's
step-N and a Hugging Face Trainer's checkpoint-N), and the files DeepSpeed's runner reads for an attempt
(written, then checked before it starts). The other parts (supervisor.py's watching, judging, restarting)
read `record` and write through `save`, `set_attempt`, `event` and `log`; nothing else assigns the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

from dscluster import fsutil
from dscluster.fsutil import atomic_write_text
from dscluster.runs.preparing import diskspace
from dscluster.runs.records import metrics, store
from dscluster.runs.records.hflog import HfLogBridge
from dscluster.runs.records.metrics import MonitorBridge
from dscluster.runs.records.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.supervising.judging import Judgement, error_fields
from dscluster.runs.views.exporter import RunExporter
from dscluster.train.commits import latest_committed  # the checkpoint protocol's rules (no torch)

CHECKPOINT_SCAN_S = 10.0  # how often the ranks' directory is searched for new checkpoint folders while a run lives
# A shared file system's clock may lag the supervisor's: folders this much older than the run still count. Kept
# short: an earlier run's folders in the same directory must not count as this run's.
CLOCK_SLACK_S = 2.0


class RunBook:
    """The run's record and everything written about it (see the module's docstring)."""

    def __init__(self, run_dir: Path, record: RunRecord):
        self.run_dir = Path(run_dir)
        self.record = record  # the one copy: assigned here only (save), read by every part
        self.log_path = self.run_dir / "logs" / "launcher.log"
        self.disk_full: str | None = None  # what this supervision could not write for lack of space
        self._unsaved: OSError | None = None  # the last run.json write failed (e.g. a full disk)
        self._scanned_at = -CHECKPOINT_SCAN_S
        self._ckpt_before: Any = None  # the checkpoint folders there before attempt 1 (not this run's)
        cfg = record.launch
        # A Hugging Face Trainer's rank-0 log dicts -> metrics.jsonl; its batch, output dir and resumes
        self.hflog = HfLogBridge(self.run_dir, cfg.node_uid, tensorboard=lambda: self.monitor._tensorboard(),
                                 cwd=cfg.cwd)
        self.monitor = MonitorBridge(self.run_dir, (record.ds_config or {}).get("train_batch_size"),
                                     cfg.node_uid,  # DeepSpeed's csv monitor -> metrics.jsonl
                                     batch_hint=lambda: self.hflog.batch)
        self.exporter = RunExporter(self)  # Prometheus /metrics while the run lives

    @property
    def cfg(self) -> LaunchSpec:
        """What every attempt executes (the record's launch; under a scheduler its hosts are known once allocated)."""
        return self.record.launch

    def open(self) -> None:
        """The run's supervision begins: its reserve made, its metrics served."""
        self.keep_reserve()
        self.exporter.start()

    def close(self) -> None:
        self.exporter.stop()

    def save(self, **fields: Any) -> None:
        """Record `fields`: in memory at once, in run.json when the disk takes it. A write that fails (a full
        disk) leaves the previous run.json whole (it is written atomically) and never stops the supervision:
        the record is written again at the next change or within a second."""
        self.record = self.record.replace(**fields)
        self._write_record()

    def _write_record(self) -> None:
        try:
            try:
                store.write_record(self.run_dir, self.record)
            except OSError as err:
                if not diskspace.is_enospc(err) or not self._give_up_reserve():
                    raise
                # The disk was full, even if the reserve's room takes this record: say so, whatever frees up.
                self.disk_full = self.disk_full or str(err)
                store.write_record(self.run_dir, self.record)  # in the room the reserve left
        except OSError as err:
            if self._unsaved is None:
                print(f"run record not written ({err}); supervising on, writing it again every second",
                      file=sys.stderr, flush=True)
                if diskspace.is_enospc(err):
                    self.disk_full = self.disk_full or str(err)
            self._unsaved = err
            return
        if self._unsaved is not None:
            print("run record written again", file=sys.stderr, flush=True)
        self._unsaved = None

    def keep_reserve(self) -> None:
        """A little space of the run's own (diskspace.RESERVE), made while the disk has room: given up when
        a record write finds the disk full, so the run's outcome is still written (never left "lost")."""
        path = self.run_dir / diskspace.RESERVE
        free = diskspace.free_bytes(self.run_dir)
        if os.path.lexists(path) or free is None or free < 16 * diskspace.RESERVE_BYTES:
            return
        with contextlib.suppress(OSError):
            fsutil.atomic_write_bytes(path, bytes(diskspace.RESERVE_BYTES))

    def _give_up_reserve(self) -> bool:
        try:
            os.unlink(self.run_dir / diskspace.RESERVE)
        except OSError:
            return False
        return True

    def tick(self, attempt: int, final: bool = False) -> None:
        """Once a second: the newest committed step, the metrics (DeepSpeed's monitor rows, a Hugging Face
        Trainer's logs), a record write that failed."""
        self.refresh_checkpoint()
        try:
            self._tick_metrics(attempt, final=final)
        except OSError as err:  # metrics.jsonl on a full disk: the metrics wait, the run does not
            print(f"metrics not copied: {err}", file=sys.stderr, flush=True)
        if self._unsaved is not None:
            self._write_record()
        else:
            self.keep_reserve()

    def set_attempt(self, attempt: Attempt, **fields: Any) -> None:
        """Record `attempt` (the current one: it replaces the last of that number, else it is added)."""
        attempts = list(self.record.attempts)
        if attempts and attempts[-1].n == attempt.n:
            attempts[-1] = attempt
        else:
            attempts.append(attempt)
        self.save(attempts=attempts, **fields)

    def event(self, name: str, **fields: Any) -> None:
        try:
            store.append_event(self.run_dir, name, **fields)
        except OSError as err:  # e.g. a directory on the way made a symlink (fsutil refuses it): keep supervising
            print(f"event {name} not recorded: {err}", file=sys.stderr, flush=True)

    def log(self, text: str) -> None:
        # logs/ is the node user's to write: fsutil's no-symlink rule, never a plain open by name.
        line = f"[dscluster {time.strftime('%H:%M:%S')}] {text}\n"
        try:
            with fsutil.open_append(self.log_path) as f:
                f.write(line.encode())
        except OSError as err:
            print(f"{line.rstrip()} (not in {self.log_path}: {err})", file=sys.stderr, flush=True)

    def _tick_metrics(self, attempt: int, final: bool = False) -> None:
        self.monitor.tick(final=final)
        if not self.cfg.reference_trainer:  # the reference trainer logs itself
            self.hflog.tick(attempt, self.monitor.last_step, final=final)

    def hf_output_dirs(self, scan: bool = False) -> list[Path]:
        """Where a Hugging Face Trainer or Accelerate program of this run writes its checkpoints (its
        --output_dir, as its logs and dscluster.hf say, and the folders it was seen writing: `scan` looks now,
        else at most every CHECKPOINT_SCAN_S)."""
        from dscluster.runs.views.hfview import output_dirs

        self._discover_checkpoint_dirs(force=scan)
        return output_dirs(self.record, self.run_dir, self.hflog.output_dirs)

    def _discover_checkpoint_dirs(self, force: bool = False) -> None:
        """The checkpoint folders (any of dscluster.ckptlayout's layouts) the program wrote under the ranks'
        directory since the run began, their parents recorded (run.json's checkpoint_dirs) for every view."""
        from dscluster.ckptlayout import discover, snapshot

        now = time.monotonic()
        if not force and now - self._scanned_at < CHECKPOINT_SCAN_S:
            return
        self._scanned_at = now
        root, skip = Path(self.record.launch.cwd), (self.run_dir.parent,)
        before = self._ckpt_before
        if before is None:  # the first look (before attempt 1's ranks start): what was there is not this run's
            self._ckpt_before = snapshot(root, skip=skip)
            return
        since = store.iso_time(self.record.created) - CLOCK_SLACK_S if self.record.created else 0.0
        found = discover(root, since, skip=skip, before=before)
        new = tuple(str(d) for d in found if str(d) not in self.record.checkpoint_dirs)
        if new:
            self.save(checkpoint_dirs=(*self.record.checkpoint_dirs, *new))

    def newest_hf_checkpoint(self):
        from dscluster.hfckpt import newest_complete

        found = [c for c in (newest_complete(d, self.record.world_size) for d in self.hf_output_dirs()) if c]
        return max(found, key=lambda c: c.step) if found else None

    def hf_attempt_begins(self, n: int):
        """The newest complete checkpoint attempt `n` can resume from (None: none), told to the log reader with
        whether the program's checkpoint folders are known at all (then "none" is known, not guessed)."""
        self.hflog.known[n] = bool(self.hf_output_dirs(scan=True))
        hf = self.newest_hf_checkpoint()
        self.hflog.expected[n] = hf.step if hf is not None else None
        self.hflog.expected_tag[n] = hf.name if hf is not None else ""
        return hf

    def move_torn_hf_checkpoints(self, n: int) -> None:
        """Before a restart: torn checkpoint-N aside, so a script resuming from the newest resumes from the
        newest complete one."""
        from dscluster.hfckpt import move_torn

        for folder in self.hf_output_dirs(scan=True):
            try:
                moved = move_torn(folder, self.record.world_size, self.cfg.node_uid)
            except OSError as err:
                self.log(f"torn checkpoints in {folder} could not be moved aside: {err}")
                continue
            for src, dst in moved:
                self.log(f"{src.name} is torn (its save did not finish): moved aside to {dst}")
                self.event("checkpoint-torn", attempt=n, checkpoint=str(src), moved_to=str(dst))

    def set_aside_torn_steps(self, n: int) -> None:
        """Once attempt `n`'s failure is judged: a `step-N` of the run's checkpoints without its COMMIT.json (the
        failure tore its save) is renamed `step-N.incomplete-K` now, not at the next save of that step, so no
        one (`ckpt`, a copy, a person) takes it for a checkpoint meanwhile. Nothing writes it any more: the
        attempt is torn down (a rank on a cut-off node that still writes follows the rename)."""
        from dscluster.train.commits import committed_steps, set_aside_uncommitted, step_dirs

        save_dir = store.save_dir(self.run_dir, self.record)
        if save_dir.is_symlink():
            return  # never follow a link the node user may have planted
        done = set(committed_steps(save_dir))
        for step in (s for s in step_dirs(save_dir) if s.step not in done):
            try:
                aside = set_aside_uncommitted(save_dir, step.step)
            except Exception as err:  # noqa: BLE001 - a checkpoint left as it is never fails the run's end
                self.log(f"{step.path.name} is torn but could not be renamed: {err}")
                continue
            if aside is not None:
                self.log(f"{step.path.name} is torn (its save did not finish): renamed {aside.name}")
                self.event("checkpoint-torn", attempt=n, checkpoint=str(step.path), moved_to=str(aside))

    def refresh_checkpoint(self) -> None:
        step = latest_committed(store.save_dir(self.run_dir, self.record))
        if step is not None and step != self.record.last_checkpoint_step:
            self.save(last_checkpoint_step=step)
            self.exporter.commit_seen()
        hf = self.newest_hf_checkpoint()
        if hf is not None and str(hf.path) != self.record.last_hf_checkpoint:
            self.save(last_hf_checkpoint=str(hf.path))

    def progress(self) -> tuple:
        """How far the run has got: its newest committed checkpoint and the highest step in its metrics."""
        newest = metrics.latest(self.run_dir)
        return self.record.last_checkpoint_step, (newest or {}).get("step")

    def record_judgement(self, n: int, attempt: Attempt, judged: Judgement) -> None:
        """Attempt `n`'s failure as judged (judging.py): the first rank error and why no restart (events, a
        line), the attempt's reason and exit code, the explanation; its torn checkpoint steps set aside."""
        recorded = judged.recorded
        if recorded and recorded.get("error"):
            self.event("rank-error", attempt=n, signature=recorded["signature"], **error_fields(recorded["error"]))
        if recorded and "no_restart" in recorded:
            self.event("no-restart", attempt=n, **recorded["no_restart"])
            self.log(f"not restarting: {recorded['no_restart']['why']}")
        # The attempt's code is the run's (the runner's own is -9 when the teardown killed it: not the cause).
        self.set_attempt(dataclasses.replace(attempt, reason=judged.reason, rank_exit_code=judged.rank_exit_code,
                                             exit_code=judged.exit_code, present=attempt.present | {"rank_exit_code"}),
                         explanation=recorded)
        self.set_aside_torn_steps(n)

    def finish(self, status: str, exit_code: int) -> None:
        """The run's end, recorded: its status and exit code, the `finished` event; the reserve goes back."""
        self.save(status=status, exit_code=exit_code, ended=store.now_iso())
        if status in ("succeeded", "stopped"):
            # An earlier attempt's failure is history (its reason stays in attempts), not why the run ended.
            self.save(explanation=None)
        self.event("finished", status=status, exit_code=exit_code)
        with contextlib.suppress(OSError):
            os.unlink(self.run_dir / diskspace.RESERVE)  # the run is over: its reserve goes back to the disk

    # ---- the files DeepSpeed's runner reads --------------------------------------------------
    def check_runner_files(self, plan) -> None:
        """DeepSpeed's runner runs a cluster launch on this machine's own resources when its --hostfile is
        missing: refuse to start it unless what it reads is there, as written."""
        for f in plan.files:
            if f.path.parent != self.run_dir and fsutil.read_bytes(f.path) != f.text.encode():
                raise RuntimeError(f"{f.path} is not what the supervisor wrote; not starting DeepSpeed's runner")
        for arg in plan.argv:
            if arg.startswith("--hostfile=") and not Path(arg.split("=", 1)[1]).is_file():
                raise RuntimeError(f"{arg}: the hostfile is missing; not starting DeepSpeed's runner (it would "
                                   "run the script on this machine)")

    def write_files(self, plan) -> None:
        for f in plan.files:
            if f.secret:
                uid = self.cfg.node_uid
                atomic_write_text(f.path, f.text, 0o600, owner=int(uid) if uid is not None and os.geteuid() == 0
                                  else None)
            else:
                atomic_write_text(f.path, f.text, f.mode)


def record_crash(run_dir: Path, err: BaseException) -> None:
    """The supervisor broke: its run's ranks stopped, its GPU leases given back, and the record says so (it must
    not stay "running"). Never raises."""
    from dscluster.runs.leases.leasing import release
    from dscluster.runs.supervising.reaper import reap

    try:
        rec = store.read_record(run_dir)  # only to mark it failed: nothing in it is executed
        with contextlib.suppress(Exception):
            reap(rec.id, grace=1.0)  # first: stopping the ranks never waits on a write (a full disk)
        release(rec, run_dir.parent.parent)  # its GPU leases (runs/leases/leasing.py)
        store.update_record(run_dir, rec, status="failed", exit_code=1, ended=store.now_iso(),
                            explanation={"signature": "supervisor-error", "cause": f"the supervisor crashed: {err}",
                                         "fix": "see logs/supervisor.log in the run directory",
                                         "retry": False, "evidence": repr(err)[:300]})
    except Exception:  # noqa: BLE001
        pass

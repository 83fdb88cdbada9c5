"""What the supervisor writes while it supervises (the `RunBook` part of runs/supervising/supervisor.Supervisor): the
run record (in memory at once, in run.json when the disk takes it, with a reserve for a full disk),
events, its own lines in the launcher log, metrics, the newest committed checkpoint (dscluster's step-N
and a Hugging Face Trainer's checkpoint-N), the progress marks that tell a stall, and the files
DeepSpeed's runner reads for an attempt (written, then checked before it starts)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from dscluster import fsutil
from dscluster.fsutil import atomic_write_text
from dscluster.logtext import LINE_LIMIT
from dscluster.runs.preparing import diskspace
from dscluster.runs.records import metrics, store
from dscluster.runs.records.record import Attempt
from dscluster.train.commits import latest_committed  # the checkpoint protocol's rules (no torch)

READ_CHUNK = 1 << 20  # the most of the launcher log the supervisor reads in one tick
CHECKPOINT_SCAN_S = 10.0  # how often the ranks' directory is searched for new checkpoint folders while a run lives
# A shared file system's clock may lag the supervisor's: folders this much older than the run still count. Kept
# short: an earlier run's folders in the same directory must not count as this run's.
CLOCK_SLACK_S = 2.0


class RunBook:
    """Mixed into Supervisor: these methods use its run_dir, record, cfg, log_path, monitor, hflog, exporter."""

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
                self._disk_full = self._disk_full or str(err)
                store.write_record(self.run_dir, self.record)  # in the room the reserve left
        except OSError as err:
            if self._unsaved is None:
                print(f"run record not written ({err}); supervising on, writing it again every second",
                      file=sys.stderr, flush=True)
                if diskspace.is_enospc(err):
                    self._disk_full = self._disk_full or str(err)
            self._unsaved = err
            return
        if self._unsaved is not None:
            print("run record written again", file=sys.stderr, flush=True)
        self._unsaved = None

    def _keep_reserve(self) -> None:
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

    def _tick(self, final: bool = False) -> None:
        """Once a second: the newest committed step, the metrics (DeepSpeed's monitor rows, a Hugging Face
        Trainer's logs), a record write that failed."""
        self._refresh_checkpoint()
        try:
            self._tick_metrics(final=final)
        except OSError as err:  # metrics.jsonl on a full disk: the metrics wait, the run does not
            print(f"metrics not copied: {err}", file=sys.stderr, flush=True)
        if self._unsaved is not None:
            self._write_record()
        else:
            self._keep_reserve()

    def _set_attempt(self, attempt: Attempt, **fields: Any) -> None:
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

    def _log(self, text: str) -> None:
        # logs/ is the node user's to write: fsutil's no-symlink rule, never a plain open by name.
        line = f"[dscluster {time.strftime('%H:%M:%S')}] {text}\n"
        try:
            with fsutil.open_append(self.log_path) as f:
                f.write(line.encode())
        except OSError as err:
            print(f"{line.rstrip()} (not in {self.log_path}: {err})", file=sys.stderr, flush=True)

    def _tick_metrics(self, final: bool = False) -> None:
        self.monitor.tick(final=final)
        if not self.cfg.reference_trainer:  # the reference trainer logs itself
            self.hflog.tick(self._attempt, self.monitor.last_step, final=final)

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
        if not force and now - getattr(self, "_scanned_at", -CHECKPOINT_SCAN_S) < CHECKPOINT_SCAN_S:
            return
        self._scanned_at = now
        root, skip = Path(self.record.launch.cwd), (self.run_dir.parent,)
        before = getattr(self, "_ckpt_before", None)
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
                self._log(f"torn checkpoints in {folder} could not be moved aside: {err}")
                continue
            for src, dst in moved:
                self._log(f"{src.name} is torn (its save did not finish): moved aside to {dst}")
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
                self._log(f"{step.path.name} is torn but could not be renamed: {err}")
                continue
            if aside is not None:
                self._log(f"{step.path.name} is torn (its save did not finish): renamed {aside.name}")
                self.event("checkpoint-torn", attempt=n, checkpoint=str(step.path), moved_to=str(aside))

    def _refresh_checkpoint(self) -> None:
        step = latest_committed(store.save_dir(self.run_dir, self.record))
        if step is not None and step != self.record.last_checkpoint_step:
            self.save(last_checkpoint_step=step)
            self.exporter.commit_seen()
        hf = self.newest_hf_checkpoint()
        if hf is not None and str(hf.path) != self.record.last_hf_checkpoint:
            self.save(last_hf_checkpoint=str(hf.path))

    def _progress(self) -> tuple:
        """How far the run has got: its newest committed checkpoint and the highest step in its metrics."""
        newest = metrics.latest(self.run_dir)
        return self.record.last_checkpoint_step, (newest or {}).get("step")

    def _log_sizes(self) -> dict[Path, int]:
        sizes = {}
        for p in [self.log_path, *(self.run_dir / "logs").glob("*_rank*.log")]:
            try:
                sizes[p] = p.stat().st_size
            except OSError:
                pass
        return sizes

    def _progress_mark(self) -> tuple:
        sizes = []
        for p in [self.run_dir / "metrics.jsonl", *sorted((self.run_dir / "logs").glob("*.log"))]:
            try:
                sizes.append(p.stat().st_size)
            except OSError:
                pass
        return tuple(sizes)

    def _read_new(self, offset: int) -> tuple[str, int]:
        """The launcher log's new whole lines from `offset`, at most READ_CHUNK bytes a tick. A line that does not
        end within LINE_LIMIT bytes (a program printing without newlines, or on purpose) is read past as it comes,
        never read again from its start on every tick (which would grow with the square of its length)."""
        try:
            data = fsutil.read_bytes(self.log_path, offset, READ_CHUNK)
        except OSError:
            return "", offset
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) > LINE_LIMIT:
            end = len(data)
        return data[:end].decode("utf-8", "replace"), offset + end

    # ---- the files DeepSpeed's runner reads --------------------------------------------------
    def _check_runner_files(self, plan) -> None:
        """DeepSpeed's runner runs a cluster launch on this machine's own resources when its --hostfile is
        missing: refuse to start it unless what it reads is there, as written."""
        for f in plan.files:
            if f.path.parent != self.run_dir and fsutil.read_bytes(f.path) != f.text.encode():
                raise RuntimeError(f"{f.path} is not what the supervisor wrote; not starting DeepSpeed's runner")
        for arg in plan.argv:
            if arg.startswith("--hostfile=") and not Path(arg.split("=", 1)[1]).is_file():
                raise RuntimeError(f"{arg}: the hostfile is missing; not starting DeepSpeed's runner (it would "
                                   "run the script on this machine)")

    def _write_files(self, plan) -> None:
        for f in plan.files:
            if f.secret:
                uid = self.cfg.node_uid
                atomic_write_text(f.path, f.text, 0o600, owner=int(uid) if uid is not None and os.geteuid() == 0
                                  else None)
            else:
                atomic_write_text(f.path, f.text, f.mode)

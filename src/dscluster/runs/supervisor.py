"""The supervisor: one detached process per run (`python -m dscluster.runs.supervisor RUN_DIR`).

For each attempt it starts a watchdog on every node (runs/watchdog.py), then DeepSpeed's own runner
with the argv/env from launch/plan.py, and watches:
  - the runner's exit code (DeepSpeed's runner exits 0 when pdsh dies by a signal, so 0 alone is not
    trusted: failure lines in the launcher output also count),
  - the launcher output: `ssh exited with exit code N`, launch.py's `Killing subprocess` (a rank died),
  - every node's heartbeat (crash: the ssh session closes; partition: heartbeats stop),
  - progress (log / metrics growth) against the stall timeout,
  - a stop request (SIGTERM to the supervisor, or a `stop` file in the run dir).
On failure it tears the attempt down on every node (watchdog "kill", the ranks found by the run's
own DSCLUSTER_RUN_ID), explains the failure from the logs, and restarts from the newest committed
checkpoint (the trainer resumes from <run-dir>/checkpoints by itself) while restarts remain.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dscluster import explain as explainer
from dscluster import fsutil, trust
from dscluster.cluster.runner import LocalRunner
from dscluster.fsutil import atomic_write_text
from dscluster.launcher import backends
from dscluster.launcher.masklog import MIN_SECRET, copy_masked
from dscluster.launcher.plan import LaunchRequest, build_plan
from dscluster.runs import detect, diskspace, metrics, shrink, store
from dscluster.runs.channel import NodeChannel, close_all
from dscluster.runs.exporter import RunExporter
from dscluster.runs.hflog import HfLogBridge
from dscluster.runs.hooks import hooks_for
from dscluster.runs.metrics import MonitorBridge
from dscluster.runs.nodes import node_names, node_runners, sim_name, unreachable_hosts
from dscluster.runs.reaper import reap
from dscluster.runs.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.verdict import (
    Failure,
    explain_failure,
    failed_rank_exit_code,
    futile_restart,
    killed_by_signal,
    signal_name,
)
from dscluster.train.commits import latest_committed  # the checkpoint protocol's rules (no torch)
from dscluster.train.resumes import resume_env, step_of_env

STOP_FILE = "stop"


def _set_pdeathsig() -> None:
    """Child-side: die with the supervisor. Without this a SIGKILLed supervisor leaves the runner."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def pick_port() -> int:
    """A rendezvous port for one attempt: random, below Linux's ephemeral range (32768+) so outgoing
    connections never hold it, and never DeepSpeed's default 29500 that plain launches use. A clash
    with a listener shows up as EADDRINUSE, which the explainer marks as retryable: the next attempt
    draws another port."""
    import random

    while True:
        port = random.SystemRandom().randrange(20000, 32000)
        if port != 29500:
            return port


def _sim_heal(sim: str, node: str) -> str:
    return f"dscluster sim heal{'' if sim == 'default' else f' --name {sim}'} {node}"


class Supervisor:
    def __init__(self, run_dir: Path, record: RunRecord, secrets: dict[str, str] | None = None):
        # The record comes from the launching process (start.py's hand-off), not from run.json: the node
        # user can write the run directory, and the record says what this process executes.
        self.run_dir = Path(run_dir)
        self.record = record
        self.secrets = dict(secrets or {})
        self.stop_requested = False
        self.backend = backends.get(self.cfg.launcher)
        self.hooks = hooks_for(self)  # the backend's own part of supervising (Slurm's allocation...), runs/hooks.py
        # host -> the Runner that reaches it ({} = this machine); a backend that does not reach the nodes
        # over ssh (Slurm) reaches them through its scheduler only.
        self.runners = node_runners(self.record) if self.backend.over_ssh else {}
        self._attempt = 0
        self.log_path = self.run_dir / "logs" / "launcher.log"
        self._attempt_started = time.time()
        self._failure_logs: dict[Path, int] | None = None
        self._attempt_logs: dict[Path, int] = {}
        self._checkpoint_env: dict[str, str] = {}
        # A Hugging Face Trainer's rank-0 log dicts -> metrics.jsonl; its batch, output dir and resumes
        self.hflog = HfLogBridge(self.run_dir, self.cfg.node_uid, tensorboard=lambda: self.monitor._tensorboard(),
                                 cwd=self.cfg.cwd)
        self._unsaved: OSError | None = None  # the last run.json write failed (e.g. a full disk)
        self._disk_full: str | None = None  # what this supervisor could not write for lack of space
        self.monitor = MonitorBridge(self.run_dir, (self.record.ds_config or {}).get("train_batch_size"),
                                     self.cfg.node_uid,  # DeepSpeed's csv monitor -> metrics.jsonl
                                     batch_hint=lambda: self.hflog.batch)
        self.exporter = RunExporter(self)  # Prometheus /metrics while the run lives
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    # ---- bookkeeping -------------------------------------------------------------------------
    @property
    def cfg(self) -> LaunchSpec:
        """What every attempt executes (the record's launch; under Slurm its hosts are known once allocated)."""
        return self.record.launch

    def _on_stop(self, *_: Any) -> None:
        self.stop_requested = True

    def _stop_wanted(self) -> bool:
        return self.stop_requested or (self.run_dir / STOP_FILE).exists()

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

    # ---- one attempt -------------------------------------------------------------------------
    def _start_channels(self, attempt: int, port: int) -> list[NodeChannel]:
        if self.backend.allocates:
            return []  # the scheduler (Slurm) watches its nodes and ends the step when one is lost
        hosts = list(self.cfg.host_names) or ["localhost"]
        chans = []
        for host in hosts:
            chans.append(NodeChannel(host, self.runners.get(host) or LocalRunner(), self.cfg.python, self.record.id,
                                     ping_timeout=self.cfg.ping_timeout,
                                     grace=self.cfg.grace, master_port=port,
                                     stderr_path=self.run_dir / "logs" / "watchdog.log"))
        return chans

    def _request(self, attempt: int, port: int) -> LaunchRequest:
        # From self.cfg each time: under Slurm the hosts are recorded once the allocation is known.
        return self.cfg.request(attempt, port, run_id=self.record.id, run_dir=self.run_dir,
                                user_env=self._checkpoint_env, secrets=self.secrets,
                                files_dir=trust.runner_dir(self.record.id))

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

    def _progress_mark(self) -> tuple:
        sizes = []
        for p in [self.run_dir / "metrics.jsonl", *sorted((self.run_dir / "logs").glob("*.log"))]:
            try:
                sizes.append(p.stat().st_size)
            except OSError:
                pass
        return tuple(sizes)

    def run_attempt(self, n: int) -> tuple[int | None, Failure | None, bool]:
        """Returns (runner exit code, failure, stopped)."""
        c = self.cfg
        # The watchdogs connect while the runner starts: waiting for them first would add an ssh
        # handshake + interpreter start to every launch. A node that never answers is caught below.
        port = self.cfg.master_port or pick_port()  # the user's --master_port, else one per attempt
        self._attempt = n
        chans = self._start_channels(n, port)
        plan = None
        try:
            self._attempt_started = time.time()
            self._failure_logs = None
            # Where the ranks find the run's checkpoints, and the step a resume is expected from.
            self._checkpoint_env = resume_env(store.save_dir(self.run_dir, self.record))
            plan = build_plan(self._request(n, port))
            try:
                self._write_files(plan)
            except OSError as err:  # the attempt cannot start without its files (a full disk)
                if diskspace.is_enospc(err):
                    self._disk_full = str(err)
                self._log(f"attempt {n} not started: {err}")
                self._failure_logs = self._log_sizes()
                return None, Failure("exit", f"could not write the attempt's files: {err}"), False
            self._check_runner_files(plan)
            hf = self.newest_hf_checkpoint()
            self.hflog.expected[n] = hf.step if hf is not None else None
            attempt = Attempt(n, started=store.now_iso(), master_port=port, rank_nodes=tuple(plan.rank_nodes),
                              resume_step=step_of_env(self._checkpoint_env),
                              resume_from=hf.name if hf is not None else None,
                              present=frozenset({"master_port", "rank_nodes", "resume_step"}))
            self._attempt_logs = self._log_sizes()  # where every log stood: this attempt's part follows
            log = fsutil.open_append(self.log_path)
            log_offset = os.fstat(log.fileno()).st_size
            self._attempt_logs[self.log_path] = log_offset
            self._log(f"attempt {n}: {' '.join(plan.argv)}")
            masked = any(len(v) >= MIN_SECRET for v in self.secrets.values())
            runner = subprocess.Popen(plan.argv, env={**os.environ, **plan.env}, cwd=c.cwd,
                                      stdout=subprocess.PIPE if masked else log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_set_pdeathsig)
            self._runner = runner
            if masked:
                self._mask_output(runner, log)  # the log is the copying thread's now
            else:
                log.close()
            self._set_attempt(attempt, status="running", world_size=plan.world_size)
            self.event("launched", attempt=n, master_port=port, runner_pid=runner.pid)
            return self._watch(n, runner, chans, log_offset, plan.world_size)
        finally:
            close_all(chans)
            # Secret values (node_env.sh) live on shared storage only while an attempt's ranks may read
            # them; the next attempt writes them again from the supervisor's memory.
            for f in plan.files if plan else ():
                if f.secret:
                    # By the folder's descriptor: a run directory (or `runs/`) swapped for a symlink by the
                    # node user must not make this process remove a file elsewhere.
                    with contextlib.suppress(OSError):
                        fsutil.unlink(f.path)

    def _mask_output(self, runner: subprocess.Popen, log) -> None:
        """Copy the runner's output into the launcher log with every secret value masked (launcher/masklog.py):
        pdsh's and mpirun's relay of what the ranks print passes here."""
        import threading

        def copy() -> None:
            def write(data: bytes) -> None:
                try:
                    log.write(data)
                    log.flush()
                except OSError:
                    pass  # a full disk: the output is lost, never the run (the pipe keeps draining)

            try:
                copy_masked(runner.stdout.fileno(), write, self.secrets.values())
            finally:
                runner.stdout.close()
                with contextlib.suppress(OSError):
                    log.close()

        threading.Thread(target=copy, name="launcher-log", daemon=True).start()

    def _watch(self, n: int, runner: subprocess.Popen, chans: list[NodeChannel],
               log_offset: int, world: int) -> tuple[int | None, Failure | None, bool]:
        c = self.cfg
        ranks_ok = 0
        last_progress, mark = time.monotonic(), self._progress_mark()
        last_ping = 0.0
        failure: Failure | None = None
        while True:
            now = time.monotonic()
            if now - last_ping >= 1.0:
                for ch in chans:
                    ch.send("ping")
                last_ping = now
                self._tick()
            if self._stop_wanted():
                self._teardown(runner, chans, grace=c.stop_grace, why="stop requested")
                return runner.returncode, None, True
            rc = runner.poll()
            text, log_offset = self._read_new(log_offset)
            ranks_ok += len(detect.RANK_OK.findall(text))
            failure = detect.launcher_failure(text, list(c.host_names), node_names(self.record)) \
                if detect.FAILURE_LINE.search(text) else None
            if failure is None and rc is not None:
                doubt = self._doubt_success(chans, ranks_ok, world) if rc == 0 else None
                if rc == 0 and doubt is None:
                    self._teardown(runner, chans, grace=1.0, why="finished", quiet=True)
                    return 0, None, False
                failure = Failure("exit", doubt or f"the DeepSpeed runner exited with {rc}")
            elif failure is None:
                failure = detect.node_failure([ch.view() for ch in chans], connect_timeout=c.connect_timeout,
                                              heartbeat_timeout=c.heartbeat_timeout)
                if failure is not None and failure.kind == "unreachable":
                    failure.explanation = self._unreachable_explanation()
            if failure is None:
                gone = self.hooks.lost(now)
                if gone is not None:
                    failure = Failure(f"{self.backend.name}-lost", gone.evidence, explanation=gone)
            if failure is None and c.stall_timeout:
                new_mark = self._progress_mark()
                if new_mark != mark:
                    mark, last_progress = new_mark, now
                failure = detect.stall_failure(now - last_progress, c.stall_timeout)
            if failure is not None:
                self._failure_logs = self._log_sizes()
                if failure.kind == "stalled":
                    self._take_stacks(failure, n)
                elif failure.kind in ("rank-failed", "exit"):
                    failure.rank = self._dead_rank(chans, failure.node)
                self.event("rank-failed" if failure.kind in ("rank-failed", "exit") else failure.kind,
                           attempt=n, detail=failure.detail, node=failure.node)
                self._log(f"failure detected: {failure.detail}")
                self._teardown(runner, chans, grace=c.grace, why=failure.kind)
                return runner.returncode, failure, False
            time.sleep(0.25)

    def _host_of(self, node: str | None) -> str | None:
        """The hostfile host of a node name (failures name nodes; launcher lines are prefixed by hosts)."""
        return next((h for h, name in node_names(self.record).items() if name == node), node)

    def _dead_rank(self, chans: list[NodeChannel], node: str | None, wait: float = 3.0) -> int | None:
        """The rank that vanished first on the failed node, as its watchdog's heartbeats saw it; None when
        unknown or when several went at the same heartbeat. A rank's death shows in the launcher output
        up to a second before the next heartbeat, so wait for that one."""
        host = self._host_of(node) if node else None
        chan = next((ch for ch in chans if ch.node == host), chans[0] if len(chans) == 1 else None)
        if chan is None:
            return None
        deadline = time.monotonic() + wait
        while chan.first_gone() is None and time.monotonic() < deadline and not chan.closed:
            time.sleep(0.1)
        gone = chan.first_gone()
        return gone[1][0] if gone and len(gone[1]) == 1 else None

    def _take_stacks(self, failure: Failure, n: int) -> None:
        """At a stall, before the teardown: every rank's stack (runs/stacks.py), kept in the run directory;
        the odd rank out goes into the failure, for its explanation."""
        from dscluster.runs.stacks import take_at_stall

        report, path, seconds, error = take_at_stall(self.run_dir, self.record, self.links, n)
        if report is None:
            self._log(f"stacks at the stall could not be taken: {error}")
            return
        odd = report.odd_one_out()
        failure.stacks = odd.describe(1) if odd else report.summary()
        failure.stacks_odd = odd is not None
        if odd is not None:
            failure.detail += f"; odd one out: {failure.stacks}"
        self._log(f"stacks at the stall ({seconds:.1f}s, {path}): {report.summary()}")
        self.event("stacks", attempt=n, seconds=round(seconds, 2), file=str(path),
                   odd_one_out=odd.describe(1) if odd else None)

    def _doubt_success(self, chans: list[NodeChannel], ranks_ok: int, world: int) -> str | None:
        """Why an exit code 0 of the runner is not a success, or None. DeepSpeed's runner exits 0 when
        pdsh (or mpirun) dies by a signal, with ranks still running or never finished."""
        # --quiet / --log_level warning and above silence launch.py's "exits successfully" lines: the
        # watchdogs below judge alone then.
        doubt = None if detect.launcher_quiet(self.cfg.runner_flags) else \
            detect.exit_doubt(self.cfg.launcher, ranks_ok, world)
        if doubt:
            return doubt
        # Every node's watchdog must see none of the run's processes left (heartbeats come every second).
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            busy = [ch.node for ch in chans if ch.last_hb is not None and not ch.closed and ch.procs > 0]
            if not busy:
                return None
            time.sleep(0.2)
        return f"the launcher exited 0 while ranks still ran on {', '.join(busy)}"

    def _unreachable_explanation(self) -> explainer.Explanation:
        return explainer.explain_files([self.run_dir / "logs" / "watchdog.log"]) or explainer.custom(
            "node-unreachable", "A node did not answer over SSH, or could not run python there.",
            "Run `dscluster doctor` and fix the node before launching again.")

    def _read_new(self, offset: int) -> tuple[str, int]:
        try:
            data = fsutil.read_bytes(self.log_path, offset)
        except OSError:
            return "", offset
        end = data.rfind(b"\n") + 1
        return data[:end].decode("utf-8", "replace"), offset + end

    def _teardown(self, runner: subprocess.Popen, chans: list[NodeChannel], *, grace: float, why: str,
                  quiet: bool = False) -> None:
        """Kill this run's processes on every node, using only the run's own marker."""
        t0 = time.monotonic()
        # A node that stopped answering (crash, partition) reaps itself: its watchdog's pings stop.
        lost = {ch.node for ch in chans if ch.closed or ch.silent_for() > self.cfg.heartbeat_timeout / 2}
        for ch in chans:
            ch.send(f"kill {grace}")
        # Give the ranks the grace period to exit on SIGTERM before the runner side goes.
        deadline = t0 + grace + 2.0
        for ch in chans:
            if ch.node not in lost:
                ch.wait_reaped(max(0.1, deadline - time.monotonic()))
        self.hooks.cancel_attempt(self._attempt)  # e.g. only this attempt's own step of the Slurm job
        # The runner, pdsh and the ssh clients on this machine.
        try:
            os.killpg(runner.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        reap(self.record.id, grace=0.5)
        try:
            runner.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        # Nodes whose watchdog line is dead: one more try over a fresh ssh (a partitioned node reaps itself
        # when the pings stop, after ping_timeout).
        left = [ch.node for ch in chans if ch.node not in lost and not (ch.reaped or ch.procs == 0)]
        if left:
            from dscluster.runs.nodes import remote_reap
            remote_reap(self.record, left, timeout=5.0, runners=self.runners)
        if not quiet:
            self.event("teardown", why=why, seconds=round(time.monotonic() - t0, 2),
                       unreachable=[ch.node for ch in chans if ch.node in lost or (ch.closed and not ch.reaped)])

    def _tick_metrics(self, final: bool = False) -> None:
        self.monitor.tick(final=final)
        if not (self.cfg.is_module and self.cfg.program == "dscluster.train"):  # the reference trainer logs itself
            self.hflog.tick(self._attempt, self.monitor.last_step, final=final)

    def hf_output_dirs(self) -> list[Path]:
        """Where a Hugging Face Trainer of this run writes its checkpoint-N (its --output_dir, or as its logs
        and dscluster.hf say)."""
        from dscluster.runs.hfview import output_dirs

        return output_dirs(self.record, self.run_dir, self.hflog.output_dirs)

    def newest_hf_checkpoint(self):
        from dscluster.hfckpt import newest_complete

        found = [c for c in (newest_complete(d, self.record.world_size) for d in self.hf_output_dirs()) if c]
        return max(found, key=lambda c: c.step) if found else None

    def move_torn_hf_checkpoints(self, n: int) -> None:
        """Before a restart: torn checkpoint-N aside, so a script resuming from the newest resumes from the
        newest complete one."""
        from dscluster.hfckpt import move_torn

        for folder in self.hf_output_dirs():
            try:
                moved = move_torn(folder, self.record.world_size, self.cfg.node_uid)
            except OSError as err:
                self._log(f"torn checkpoints in {folder} could not be moved aside: {err}")
                continue
            for src, dst in moved:
                self._log(f"{src.name} is torn (its save did not finish): moved aside to {dst}")
                self.event("checkpoint-torn", attempt=n, checkpoint=str(src), moved_to=str(dst))

    def _refresh_checkpoint(self) -> None:
        step = latest_committed(store.save_dir(self.run_dir, self.record))
        if step is not None and step != self.record.last_checkpoint_step:
            self.save(last_checkpoint_step=step)
            self.exporter.commit_seen()
        hf = self.newest_hf_checkpoint()
        if hf is not None and str(hf.path) != self.record.last_hf_checkpoint:
            self.save(last_hf_checkpoint=str(hf.path))

    # ---- the run -----------------------------------------------------------------------------
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

    @property
    def links(self) -> dict[str, list[str]]:
        """host -> ssh argv prefix of its runner (the stack sampler's own argv), for the nodes in use."""
        return {h: r.prefix() for h, r in self.runners.items()}

    def wait_for_nodes(self) -> list[str]:
        """Before a restart: wait, with a backoff, until every node answers over ssh again (a crashed node
        reboots, a partition heals), at most restart_wait seconds. Returns the hosts still down.
        Restarting at once would burn every restart in seconds on a node that is still down."""
        if not self.runners:
            return []
        limit = float(self.cfg.restart_wait)
        deadline = time.monotonic() + limit
        names = node_names(self.record)
        delay, announced = 1.0, None
        while True:
            down = unreachable_hosts(self.runners)
            if not down or self._stop_wanted() or time.monotonic() >= deadline:
                if announced and not down:
                    self._log("every node answers again")
                return down
            shown = [names.get(h, h) for h in down]
            if shown != announced:
                announced = shown
                self._log(f"waiting for {', '.join(shown)} to come back (up to {limit:.0f}s)")
                self.event("waiting", nodes=shown, limit_s=limit)
                self.save(status="restarting", waiting_for=shown)
            time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, 10.0)

    def _leave_out_failed_node(self, failure: Failure, n: int) -> None:
        """--allow-shrink with --exclude-unhealthy: the node the attempt failed on is left out of the next
        attempt (a bad node is not given the run again), when others remain."""
        c = self.cfg
        if not self.backend.over_ssh or not (c.allow_shrink and c.exclude_unhealthy and failure.node):
            return
        host = self._host_of(failure.node)
        if host in c.host_names and len(c.host_names) > 1:
            shrink.continue_without(self, [host], n + 1, why=failure.detail)

    def _nodes_down_explanation(self, down: list[str]) -> explainer.Explanation:
        names = node_names(self.record)
        shown = [names.get(h, h) for h in down]
        limit = float(self.cfg.restart_wait)
        sim = sim_name(self.record)
        heal = ""
        if sim is not None:
            heal = "; ".join(_sim_heal(sim, n) for n in shown)
            fix = "{heal}, then dscluster restart {run}"
        else:
            fix = ("Bring the node back (power, network) and run `dscluster node start` on it, or remove it from "
                   "the cluster spec; then dscluster restart {run} (it resumes from the last committed checkpoint).")
        return explainer.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the "
                                "run could not restart.", fix, f"unreachable: {', '.join(shown)}", retry=False,
                                nodes=", ".join(shown), limit=f"{limit:.0f}", run=self.record.id,
                                **({"heal": heal} if heal else {}))

    def _rank_node_names(self) -> dict[int, str]:
        """rank -> node name in the current attempt (the hostfile's hosts, shown by their node names)."""
        last = self.record.attempts[-1] if self.record.attempts else None
        names = node_names(self.record)
        return {r: names.get(h, h) for r, h in enumerate(last.rank_nodes)} if last is not None else {}

    def explain_attempt(self, failure: Failure, rank_exit_code: int | None,
                        restarts_left: bool) -> explainer.Explanation | None:
        sim = sim_name(self.record)
        exp = explain_failure(failure, self.log_path, self._failure_logs or self._log_sizes(), self._attempt_started,
                              rank_exit_code, self.record.id, restarts_left, sim=sim, since=self._attempt_logs,
                              nodes=self._rank_node_names())
        save_dir = store.save_dir(self.run_dir, self.record)
        wrote = exp is not None and (exp.signature == "write-failed" or diskspace.failed_write(exp.evidence))
        need = diskspace.last_checkpoint_bytes(save_dir) if wrote else None
        short = diskspace.full_disk(save_dir, self.run_dir, need=need)
        self._log(f"after the failure: {diskspace.mib(diskspace.free_bytes(save_dir))} MiB free for checkpoints"
                  + (f", the last one took {diskspace.mib(need)} MiB" if need else "")
                  + (f"; {exp.signature}" if exp is not None else ""))
        if short or self._disk_full or (exp is not None and exp.signature == diskspace.SIGNATURE):
            # Where it filled, what is free there now, what the last checkpoint took; never restarted into it.
            evidence = exp.evidence if exp is not None and exp.signature == diskspace.SIGNATURE else self._disk_full
            node = ((exp.error or {}).get("node") if exp is not None else None) or failure.node
            full = diskspace.explanation(save_dir, self.record.id, evidence or "", path=str(short) if short else None,
                                         shared=self.run_dir.parent.parent, node=node)
            # The rank's own words stay beside it (the attempt's reason, status's "first error").
            return dataclasses.replace(full, error=exp.error) if exp is not None and exp.error else full
        if exp is not None and exp.signature == "ssh-255" and sim is not None and failure.node:
            # On a simulated cluster a node's sshd comes back with `sim heal`, not `node start`.
            exp = explainer.custom("ssh-255", exp.cause, "Check the node with `dscluster doctor`; {heal} brings it "
                                   "back.", exp.evidence, exp.retry, heal=_sim_heal(sim, failure.node))
        return exp

    def run(self) -> int:
        self.save(status="pending", supervisor_pid=os.getpid(), supervisor_host=socket.gethostname())
        self._keep_reserve()
        self.exporter.start()
        try:
            return self._run()
        finally:
            self.exporter.stop()
            self._kill_runner_group()

    def _kill_runner_group(self) -> None:
        """However the supervision ends (an error included: its run directory removed under it), nothing it
        started on this machine outlives it: the runner's whole process group (pdsh, ssh clients, srun, which
        the runner's death signal alone leaves behind)."""
        runner = getattr(self, "_runner", None)
        if runner is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(runner.pid, signal.SIGKILL)

    def _run(self) -> int:
        if self.record.batch_plan:  # a run continued on another world size (restart --hosts)
            self.event("batch", **self.record.batch_plan)
        max_attempts = 1 + int(self.cfg.max_restarts)
        exit_code, status = 1, "failed"
        if not self.hooks.allocate():
            max_attempts = 0  # no allocation: the record says why
        previous: dict | None = None  # the last attempt's explanation, and how far the run had got then
        reached = self._progress()
        for n in range(1, max_attempts + 1):
            rc, failure, stopped = self.run_attempt(n)
            last = self.record.attempts[-1] if self.record.attempts else None
            # None: failed before the runner started (unreachable node)
            attempt = last if last is not None and last.n == n else Attempt(n, started=store.now_iso())
            attempt = dataclasses.replace(attempt, ended=store.now_iso(), exit_code=rc)
            self._set_attempt(attempt)
            self._tick(final=True)
            timeout = self.hooks.timed_out() if stopped or failure else None
            if timeout is not None:
                self._set_attempt(dataclasses.replace(attempt, reason="time limit"), explanation=timeout.to_dict())
                exit_code, status = 1, "failed"
                self.event(f"{self.backend.name}-timeout", attempt=n, job_id=self.hooks.job_id)
                break
            if stopped:
                self._set_attempt(dataclasses.replace(attempt, reason="stopped"))
                exit_code, status = 130, "stopped"
                self.event("stopped", attempt=n)
                break
            if failure is None:
                self._set_attempt(dataclasses.replace(attempt, reason="succeeded"))
                exit_code, status = 0, "succeeded"
                break
            # The runner itself was killed by the teardown: the first failing rank's code is the real one.
            rank_rc = failed_rank_exit_code(self.log_path, self._failure_logs or {}, f"attempt {n}: ",
                                            node=self._host_of(failure.node) if failure.node else None)
            exp = self.explain_attempt(failure, rank_rc, restarts_left=n < max_attempts)
            reason = failure.detail
            if exp is not None and exp.error_line:
                reason = exp.error_line  # the first failing rank's own words, not a launcher line
            if exp is not None and exp.signature == "rank-exit":
                reason = f"exit {rank_rc}" + (f" on {failure.node}" if failure.node else "")
            sig = killed_by_signal(rank_rc)
            if exp is not None and exp.signature == "rank-signal" and sig is not None:
                who = f"rank {failure.rank}" if failure.rank is not None else "a rank"
                reason = f"{who}{f' on {failure.node}' if failure.node else ''} killed by {signal_name(sig)}"
            exit_code = rank_rc if rank_rc and rank_rc > 0 else 128 + sig if sig else (rc if rc and rc > 0 else 1)
            recorded = {**exp.to_dict(), "attempt": n} if exp else None  # whose ending it explains
            now = self._progress()
            progressed, reached = now != reached, now
            if recorded and recorded.get("error"):
                self.event("rank-error", attempt=n, signature=recorded["signature"], **recorded["error"])
            if recorded and n < max_attempts and not self._stop_wanted():
                # No futile restarts: a failure no restart can fix, or the same failure again without progress.
                if not recorded.get("retry"):
                    recorded["no_restart"] = {"why": "cannot-help"}
                elif futile_restart(previous, recorded, progressed):
                    recorded["no_restart"] = {"why": "same-failure", "previous": n - 1}
                if "no_restart" in recorded:
                    self.event("no-restart", attempt=n, **recorded["no_restart"])
                    self._log(f"not restarting: {recorded['no_restart']['why']}")
            previous = recorded
            self._set_attempt(dataclasses.replace(attempt, reason=reason, rank_exit_code=rank_rc,
                                                  present=attempt.present | {"rank_exit_code"}),
                              explanation=recorded)
            if n < max_attempts and (exp is None or exp.retry) and not (recorded or {}).get("no_restart") \
                    and not self._stop_wanted():
                self.save(status="restarting")
                self._leave_out_failed_node(failure, n)
                down = self.wait_for_nodes()
                if self._stop_wanted():
                    exit_code, status = 130, "stopped"
                    self.event("stopped", attempt=n)
                    break
                if down and self.cfg.allow_shrink and shrink.continue_without(self, down, n + 1):
                    down = []
                if down:
                    self.save(explanation=self._nodes_down_explanation(down).to_dict(), waiting_for=None)
                    status = "failed"
                    break
                self.save(waiting_for=None)
                self.move_torn_hf_checkpoints(n)
                self._refresh_checkpoint()
                self.event("restart", attempt=n + 1, from_step=self.record.last_checkpoint_step,
                           **({"from_checkpoint": self.record.last_hf_checkpoint}
                              if self.record.last_hf_checkpoint else {}))
                time.sleep(1.0)
                continue
            status = "failed"
            break
        self.hooks.release()
        trust.remove_runner_dir(self.record.id)
        self.save(status=status, exit_code=exit_code, ended=store.now_iso())
        if status in ("succeeded", "stopped"):
            # An earlier attempt's failure is history (its reason stays in attempts), not why the run ended.
            self.save(explanation=None)
        self.event("finished", status=status, exit_code=exit_code)
        with contextlib.suppress(OSError):
            os.unlink(self.run_dir / diskspace.RESERVE)  # the run is over: its reserve goes back to the disk
        return exit_code


def main(argv: list[str] | None = None) -> int:
    import json

    argv = sys.argv[1:] if argv is None else argv
    handoff_file = None
    if argv[:1] == ["--handoff"]:  # a Slurm batch job: the hand-off is a 0600 file the submitter alone can write
        handoff_file, argv = Path(argv[1]), argv[2:]
    run_dir = Path(argv[0])
    try:
        if handoff_file is not None:
            with os.fdopen(fsutil.open_file(handoff_file), "rb") as f:
                handoff = json.loads(f.read())
            handoff_file.unlink()  # read once: the secrets live on only in this process
        else:
            handoff = json.load(sys.stdin)  # start.py's {"record", "secrets"}: never read back from the run dir
        return Supervisor(run_dir, RunRecord.from_json(handoff["record"]), handoff.get("secrets")).run()
    except Exception as err:  # noqa: BLE001 - the record must say the supervisor broke, not stay "running"
        import traceback

        traceback.print_exc()
        try:
            rec = store.read_record(run_dir)  # only to mark it failed: nothing in it is executed
            with contextlib.suppress(Exception):
                reap(rec.id, grace=1.0)  # first: stopping the ranks never waits on a write (a full disk)
            store.update_record(run_dir, rec, status="failed", exit_code=1, ended=store.now_iso(),
                                explanation={"signature": "supervisor-error",
                                             "cause": f"the supervisor crashed: {err}",
                                             "fix": "see logs/supervisor.log in the run directory",
                                             "retry": False, "evidence": repr(err)[:300]})
        except Exception:  # noqa: BLE001
            pass
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

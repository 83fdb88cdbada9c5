"""The supervisor: one detached process per run (`python -m dscluster.runs.supervising.supervisor RUN_DIR`).

For each attempt it starts a watchdog on every node (watchdog.py), then DeepSpeed's own runner with the
argv/env from launcher/plan.py, and watches: the runner's exit code (0 alone is not trusted: DeepSpeed's
runner exits 0 when pdsh dies by a signal; failure lines in the launcher output also count),
  - the launcher output: `ssh exited with exit code N`, launch.py's `Killing subprocess` (a rank died),
  - every node's heartbeat (every 0.25 s) and the signals beside it: the ssh session closing, a probe of the
    node's sshd once the heartbeats pause, a rank seen stopped, the ranks' collectives (channel, detect, hang),
  - progress (log / metrics growth) against the stall timeout, a stop request (SIGTERM, a `stop` file).
On failure it tears the attempt down on every node (watchdog "kill", the ranks found by the run's
own DSCLUSTER_RUN_ID), explains the failure from the logs, and restarts from the newest committed
checkpoint (the trainer resumes from <run-dir>/checkpoints by itself) while restarts remain.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dscluster import fsutil, trust
from dscluster.cluster.runner import LocalRunner
from dscluster.launcher import backends, warm
from dscluster.launcher.masklog import MIN_SECRET
from dscluster.launcher.plan import LaunchRequest, build_plan
from dscluster.runs.leases.leasing import QUEUED, SupervisorLeases, release
from dscluster.runs.preparing import diskspace
from dscluster.runs.records import store
from dscluster.runs.records.hflog import HfLogBridge
from dscluster.runs.records.metrics import MonitorBridge
from dscluster.runs.records.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.supervising import detect, hang
from dscluster.runs.supervising.channel import NodeChannel, Pinger, close_all
from dscluster.runs.supervising.hooks import hooks_for
from dscluster.runs.supervising.judging import Judging
from dscluster.runs.supervising.nodes import node_names, node_runners
from dscluster.runs.supervising.reaper import reap
from dscluster.runs.supervising.runbook import RunBook
from dscluster.runs.supervising.runnerproc import RunnerHold, mask_output, start_cold
from dscluster.runs.supervising.verdict import Failure
from dscluster.runs.views.exporter import RunExporter
from dscluster.train.resumes import resume_env, step_of_env

STOP_FILE = "stop"


def pick_port() -> int:
    """A rendezvous port for one attempt: random, below Linux's ephemeral range (32768+) so outgoing
    connections never hold it, and never DeepSpeed's default 29500 that plain launches use. A clash
    with a listener shows up as EADDRINUSE, which the explainer marks as retryable: the next attempt
    draws another port."""
    import random

    while (port := random.SystemRandom().randrange(20000, 32000)) == 29500:
        pass
    return port


class Supervisor(RunBook, Judging):
    def __init__(self, run_dir: Path, record: RunRecord, secrets: dict[str, str] | None = None):
        # The record comes from the launching process (start.py's hand-off), not from run.json: the node
        # user can write the run directory, and the record says what this process executes.
        self.run_dir = Path(run_dir)
        self.record = record
        self.secrets = dict(secrets or {})
        self.stop_requested = False
        self.backend = backends.get(self.cfg.launcher)
        self.hooks = hooks_for(self)  # the backend's own part of supervising (Slurm's allocation...), runs/supervising/hooks.py
        # host -> the Runner that reaches it ({} = this machine); a backend that does not reach the nodes
        # over ssh (Slurm) reaches them through its scheduler only.
        self.runners = node_runners(self.record) if self.backend.over_ssh else {}
        self._attempt = 0
        self._runner_argv: list[str] | None = None
        self.runner_hold = RunnerHold()  # the next attempt's DeepSpeed runner, importing (runs/supervising/runnerproc.py)
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

    @property
    def cfg(self) -> LaunchSpec:
        """What every attempt executes (the record's launch; under a scheduler its hosts are known once allocated)."""
        return self.record.launch

    def _on_stop(self, *_: Any) -> None:
        self.stop_requested = True

    def _stop_wanted(self) -> bool:
        return self.stop_requested or (self.run_dir / STOP_FILE).exists()

    # ---- one attempt -------------------------------------------------------------------------
    def _start_channels(self, attempt: int, port: int) -> list[NodeChannel]:
        if self.backend.allocates:
            return []  # the scheduler (Slurm) watches its nodes and ends the step when one is lost
        hosts = list(self.cfg.host_names) or ["localhost"]
        chans = []
        for host in hosts:
            runner, node = self.runners.get(host), getattr(self.runners.get(host), "node_spec", None)
            chans.append(NodeChannel(host, runner or LocalRunner(), self.cfg.python, self.record.id,
                                     ping_timeout=self.cfg.ping_timeout, grace=self.cfg.grace, master_port=port,
                                     attempt=attempt, address=node and (node.address, node.ssh_port),
                                     stderr_path=self.run_dir / "logs" / "watchdog.log"))
        return chans

    def _request(self, attempt: int, port: int) -> LaunchRequest:
        # From self.cfg each time: under Slurm the hosts are recorded once the allocation is known.
        req = self.cfg.request(attempt, port, run_id=self.record.id, run_dir=self.run_dir,
                               user_env=self._checkpoint_env, secrets=self.secrets,
                               files_dir=trust.runner_dir(self.record.id))
        # While restarts remain, every node pre-warms its next launch.py (launcher/warm.py); a restart's nodes
        # take theirs ("-": none to pre-warm after the last attempt).
        after, linger = warm.after_seconds(), float(self.cfg.restart_wait) + 30.0
        if self._restarts_left(attempt):
            return dataclasses.replace(req, warm=f"{after}:{linger:.0f}")
        return dataclasses.replace(req, warm="-") if attempt > 1 else req

    def _restarts_left(self, attempt: int) -> bool:
        return attempt < 1 + int(self.cfg.max_restarts)

    def _prewarm(self, n: int, masked: bool, *, after: float = 0.0) -> None:
        """Another attempt may follow this one: its runner starts importing (runs/supervising/runnerproc.py) once this one
        has run `after` seconds (as every node's launch.py, launcher/warm.py), or at once when it failed."""
        if not self._restarts_left(n) or self._runner_argv is None or self.runner_hold.ready() \
                or time.time() - self._attempt_started < after:
            return
        log = None if masked else fsutil.open_append(self.log_path)
        try:
            self.runner_hold.start(self._runner_argv, env=dict(os.environ), cwd=self.cfg.cwd,
                                   stdout=subprocess.PIPE if masked else log)
        finally:
            if log is not None:
                log.close()

    def run_attempt(self, n: int) -> tuple[int | None, Failure | None, bool]:
        """Returns (runner exit code, failure, stopped)."""
        c = self.cfg
        # The watchdogs connect while the runner starts: waiting for them first would add an ssh
        # handshake + interpreter start to every launch. A node that never answers is caught below.
        port = self.cfg.master_port or pick_port()  # the user's --master_port, else one per attempt
        self._attempt = n
        chans = self._start_channels(n, port)
        pinger, plan = Pinger(chans), None
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
            hf = self.hf_attempt_begins(n)
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
            self._runner_argv = plan.argv
            runner = self.runner_hold.take(plan.argv, env={**os.environ, **plan.env}, cwd=c.cwd) or start_cold(
                plan.argv, env={**os.environ, **plan.env}, cwd=c.cwd, stdout=subprocess.PIPE if masked else log)
            self._runner = runner
            if masked:
                mask_output(runner, log, self.secrets.values())  # the log is the copying thread's now
            else:
                log.close()
            self._set_attempt(attempt, status="running", world_size=plan.world_size)
            self.event("launched", attempt=n, master_port=port, runner_pid=runner.pid)
            return self._watch(n, runner, chans, log_offset, plan.world_size)
        finally:
            pinger.stop()
            close_all(chans, wait=getattr(self, "_closing", None) is not chans)  # clean: waited for in run()
            # Secret values (node_env.sh) live on shared storage only while an attempt's ranks may read
            # them; the next attempt writes them again from the supervisor's memory.
            for f in plan.files if plan else ():
                if f.secret:
                    # By the folder's descriptor: a run directory (or `runs/`) swapped for a symlink by the
                    # node user must not make this process remove a file elsewhere.
                    with contextlib.suppress(OSError):
                        fsutil.unlink(f.path)

    def _watch(self, n: int, runner: subprocess.Popen, chans: list[NodeChannel],
               log_offset: int, world: int) -> tuple[int | None, Failure | None, bool]:
        c = self.cfg
        ranks_ok = 0
        last_progress, mark = time.monotonic(), self._progress_mark()
        last_tick = 0.0
        failure: Failure | None = None
        while True:
            now = time.monotonic()
            for ch in chans:
                ch.check(detect.SUSPECT_AFTER)  # a paused node's sshd is probed in the background
            if now - last_tick >= 1.0:
                last_tick = now
                self._tick()
                self._prewarm(n, runner.stdout is not None, after=warm.after_seconds())
            if self._stop_wanted():
                self._teardown(runner, chans, grace=c.stop_grace, why="stop requested", final=True)
                return runner.returncode, None, True
            rc = runner.poll()
            text, log_offset = self._read_new(log_offset)
            ranks_ok += len(detect.RANK_OK.findall(text))
            failure = detect.launcher_failure(text, list(c.host_names), node_names(self.record)) \
                if detect.FAILURE_LINE.search(text) else None
            if failure is None and rc is not None:
                doubt = self._doubt_success(chans, ranks_ok, world) if rc == 0 else None
                if rc == 0 and doubt is None:
                    self._teardown(runner, chans, grace=1.0, why="finished", quiet=True, settled=True, final=True)
                    self._closing = chans  # closed once the run's end is recorded (run())
                    return 0, None, False
                failure = Failure("exit", doubt or f"the DeepSpeed runner exited with {rc}")
            elif failure is None:
                failure = detect.node_failure([ch.view() for ch in chans], connect_timeout=c.connect_timeout,
                                              heartbeat_timeout=c.heartbeat_timeout) or hang.failure(chans, world)
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
                self._prewarm(n, runner.stdout is not None)
                self._teardown(runner, chans, grace=c.grace, why=failure.kind, final=not self._restarts_left(n))
                return runner.returncode, failure, False
            time.sleep(0.1)

    def _teardown(self, runner: subprocess.Popen, chans: list[NodeChannel], *, grace: float, why: str,
                  quiet: bool = False, settled: bool = False, final: bool = False) -> None:
        """Kill this run's processes on every node, using only the run's own marker. `settled` (a clean end, see
        _doubt_success): a node reporting none of them is not waited for (nothing to reap, no runner to start one).
        `final`: the run ends, the next attempt's pre-warmed launchers go too."""
        t0 = time.monotonic()
        # A node that stopped answering (crash, partition) reaps itself: its watchdog's pings stop.
        lost = {ch.node for ch in chans if ch.closed or ch.silent_for() > detect.SUSPECT_AFTER}
        clear = {ch.node for ch in chans if settled and ch.last_hb is not None and ch.procs == 0}
        for ch in chans:
            ch.send(f"kill {grace}" + (" all" if final else ""))
        deadline = t0 + grace + 2.0  # the ranks' grace to exit on SIGTERM before the runner side goes
        for ch in chans:
            if ch.node not in lost | clear:
                ch.wait_reaped(max(0.1, deadline - time.monotonic()))
        self.hooks.cancel_attempt(self._attempt)  # e.g. only this attempt's own step of the Slurm job
        # The runner, pdsh and the ssh clients on this machine.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(runner.pid, signal.SIGKILL)
        reap(self.record.id, grace=0.5, upto=None if final else self._attempt)
        with contextlib.suppress(subprocess.TimeoutExpired):
            runner.wait(timeout=5)
        # Nodes whose watchdog line is dead: one more try over a fresh ssh (a partitioned node reaps itself
        # when the pings stop, after ping_timeout).
        left = [ch.node for ch in chans if ch.node not in lost and not (ch.reaped or ch.procs == 0)]
        if left:
            from dscluster.runs.supervising.nodes import remote_reap
            remote_reap(self.record, left, timeout=5.0, runners=self.runners)
        if not quiet:
            self.event("teardown", why=why, seconds=round(time.monotonic() - t0, 2),
                       unreachable=[ch.node for ch in chans if ch.node in lost or (ch.closed and not ch.reaped)])

    def run(self) -> int:
        self.save(status=QUEUED if self.record.status == QUEUED else "pending", supervisor_pid=os.getpid(),
                  supervisor_host=socket.gethostname())  # QUEUED: a --wait launch waits its turn for the GPUs
        self._keep_reserve()
        self.exporter.start()
        self.leases = SupervisorLeases(self.record, self.run_dir.parent.parent, self.event)  # runs/leases/leasing.py
        try:
            if self.leases.acquire(self._stop_wanted, self.save):
                return self._run()
            self._end("stopped", 130)  # stopped while queued
            return 130
        finally:
            self.leases.release()  # however the run ends: the GPUs are free for the next run
            self.exporter.stop()
            self._kill_runner_group()
            close_all(getattr(self, "_closing", ()))  # a clean end's watchdog lines, hung up already
            self.runner_hold.drop()

    def _kill_runner_group(self) -> None:
        """However the supervision ends (an error too), nothing it started here outlives it: the runner's whole
        process group (pdsh, ssh clients, a scheduler's step client: the runner's death signal alone leaves them)."""
        runner = getattr(self, "_runner", None)
        if runner is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(runner.pid, signal.SIGKILL)

    def _run(self) -> int:
        """Every attempt, while restarts remain and a restart can help; then the run's end, recorded."""
        if self.record.batch_plan:  # a run continued on another world size (restart --hosts)
            self.event("batch", **self.record.batch_plan)
        max_attempts = 1 + int(self.cfg.max_restarts)
        if not self.hooks.allocate():
            max_attempts = 0  # no allocation: the record says why
        exit_code, status = 1, "failed"
        self._previous: dict | None = None  # the last attempt's explanation, and how far the run had got then
        self._reached = self._progress()
        for n in range(1, max_attempts + 1):
            rc, failure, stopped = self.run_attempt(n)
            last = self.record.attempts[-1] if self.record.attempts else None
            # None: failed before the runner started (unreachable node)
            attempt = last if last is not None and last.n == n else Attempt(n, started=store.now_iso())
            attempt = dataclasses.replace(attempt, ended=store.now_iso(), exit_code=rc)
            self._set_attempt(attempt)
            self._tick(final=True)
            ended = self._ended_without_failure(n, attempt, failure, stopped)
            if ended is not None:
                exit_code, status = ended
                break
            exit_code, restart = self._record_failure(n, attempt, rc, failure, max_attempts)
            if not restart:
                break
            status = self._before_restart(n, failure)
            if status == "stopped":
                exit_code = 130
            if status != "restarting":
                break
            if not getattr(self, "_healed", False):  # a node came back: that was the wait; else a second between attempts
                time.sleep(1.0)
        self._end(status if status != "restarting" else "failed", exit_code)
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
            release(rec, run_dir.parent.parent)  # its GPU leases (runs/leases/leasing.py)
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

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

The supervisor is composed of parts, each owning its own state, with typed records crossing between them:
  - recording, runbook.py `RunBook`: the run record (its only writer), events, the supervisor's lines in the
    launcher log, metrics, checkpoints, the runner's files;
  - watching, watching.py `AttemptWatch`: one attempt's node channels, runner and logs, read into an
    `Observation` at every look; the teardown everywhere;
  - judging, judging.py `Judge`: an `Observation` -> a `Verdict`; a failure -> a `Judgement` (its explanation,
    the attempt's reason and exit code, whether a restart can help);
  - restarting, restarting.py `Restarter`: how many attempts, the nodes the next one reaches, its runner
    pre-warmed, the wait for lost nodes and leaving them out;
  - the backend's hooks (hooks.py), given a `HookContext`: the record, save, event, log.
This class owns the loop and the stop request, and passes what one part returns to the next.
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
from dscluster.launcher import warm
from dscluster.launcher.masklog import MIN_SECRET
from dscluster.launcher.plan import build_plan
from dscluster.runs.leases.leasing import QUEUED, SupervisorLeases
from dscluster.runs.preparing import diskspace
from dscluster.runs.records import store
from dscluster.runs.records.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.supervising import watching
from dscluster.runs.supervising.hooks import HookContext, hooks_for
from dscluster.runs.supervising.judging import AttemptLogs, Judge
from dscluster.runs.supervising.nodes import remote_reap
from dscluster.runs.supervising.reaper import reap
from dscluster.runs.supervising.restarting import Restarter
from dscluster.runs.supervising.runbook import RunBook, record_crash
from dscluster.runs.supervising.runnerproc import mask_output
from dscluster.runs.supervising.verdict import Failure
from dscluster.runs.supervising.watching import AttemptWatch, start_channels
from dscluster.train.resumes import resume_env, step_of_env

STOP_FILE = "stop"
LAUNCH_POLL = 1.0  # DeepSpeed's launch.py looks at its ranks once a second (launcher/launch.py's main loop)
SAME_TIME = 1.0  # two ranks of different nodes that vanished this close (seconds, by heartbeats) went about together


class Supervisor:
    def __init__(self, run_dir: Path, record: RunRecord, secrets: dict[str, str] | None = None):
        # The record comes from the launching process (start.py's hand-off), not from run.json: the node
        # user can write the run directory, and the record says what this process executes.
        self.run_dir = Path(run_dir)
        self.book = RunBook(self.run_dir, record)  # recording: the record and all it writes
        self.secrets = dict(secrets or {})
        self.stop_requested = False
        self.backend = record.launch.backend  # resolved once, from the record's name, and carried
        # the backend's own part of supervising (a scheduler's allocation...), hooks.py
        self.hooks = hooks_for(self.backend, HookContext.of(self.book))
        self.judge = Judge(lambda: self.book.record, self.run_dir, self.backend, self.book.log)
        self.restarter = Restarter(self.book, over_ssh=self.backend.over_ssh, warm_launch=self.backend.warm_launch,
                                   stop_wanted=self._stop_wanted, transport=self.backend.transport_env)
        self.logs = AttemptLogs(time.time())  # where the logs stood for the current attempt
        self._runner: subprocess.Popen | None = None  # the current attempt's DeepSpeed runner
        self._closing: AttemptWatch | None = None  # a clean end's watch: its channels close once the end is recorded
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    @property
    def record(self) -> RunRecord:
        """The run's record as it stands (the recording part owns it)."""
        return self.book.record

    @property
    def cfg(self) -> LaunchSpec:
        """What every attempt executes (the record's launch; under a scheduler its hosts are known once allocated)."""
        return self.book.cfg

    def _on_stop(self, *_: Any) -> None:
        self.stop_requested = True

    def _stop_wanted(self) -> bool:
        return self.stop_requested or (self.run_dir / STOP_FILE).exists()

    # ---- one attempt -------------------------------------------------------------------------
    def _watch_for(self, n: int, port: int) -> AttemptWatch:
        # A scheduler watches its nodes and ends the step when one is lost: no channels then.
        chans = [] if self.backend.allocates else start_channels(
            self.cfg, self.restarter.session_runners(), self.record.id, n, port, self.run_dir / "logs" / "watchdog.log")
        return AttemptWatch(chans, run_dir=self.run_dir, log_path=self.book.log_path, lost=self.hooks.lost,
                            stall_timeout=self.cfg.supervision.stall_timeout)

    def run_attempt(self, n: int) -> tuple[int | None, Failure | None, bool]:
        """Returns (runner exit code, failure, stopped)."""
        # The watchdogs connect while the runner starts: waiting for them first would add an ssh
        # handshake + interpreter start to every launch. A node that never answers is caught below.
        port = self.restarter.port()
        self.restarter.connect(n)  # the run's ssh master on each node (masters.py): its sessions skip the handshake
        watch, plan = self._watch_for(n, port), None
        try:
            self.logs = AttemptLogs(time.time(), self.logs.since)
            # Where the ranks find the run's checkpoints, and the step a resume is expected from.
            checkpoint_env = resume_env(store.save_dir(self.run_dir, self.record))
            plan = build_plan(self.restarter.request(n, port, user_env=checkpoint_env, secrets=self.secrets))
            try:
                self.book.write_files(plan)
            except OSError as err:  # the attempt cannot start without its files (a full disk)
                if diskspace.is_enospc(err):
                    self.book.disk_full = str(err)
                self.book.log(f"attempt {n} not started: {err}")
                self.logs.at_failure = watching.log_sizes(self.run_dir, self.book.log_path)
                return None, Failure("exit", f"could not write the attempt's files: {err}"), False
            self.book.check_runner_files(plan)
            hf = self.book.hf_attempt_begins(n)
            attempt = Attempt(n, started=store.now_iso(), master_port=port, rank_nodes=tuple(plan.rank_nodes),
                              resume_step=step_of_env(checkpoint_env), resume_from=hf.name if hf is not None else None,
                              present=frozenset({"master_port", "rank_nodes", "resume_step"}))
            self._start_runner(n, plan, watch)
            self.book.set_attempt(attempt, status="running", world_size=plan.world_size)
            self.book.event("launched", attempt=n, master_port=port, runner_pid=self._runner.pid)
            return self._watch(n, watch)
        finally:
            watch.close(wait=self._closing is not watch)  # a clean end's: closed in run(), once the end is recorded
            # Secret values (node_env.sh) live on shared storage only while an attempt's ranks may read
            # them; the next attempt writes them again from the supervisor's memory.
            for f in plan.files if plan else ():
                if f.secret:
                    # By the folder's descriptor: a run directory (or `runs/`) swapped for a symlink by the
                    # node user must not make this process remove a file elsewhere.
                    with contextlib.suppress(OSError):
                        fsutil.unlink(f.path)

    def _start_runner(self, n: int, plan, watch: AttemptWatch) -> None:
        """DeepSpeed's runner, its output appended to the launcher log (through the secrets' mask when the run
        has secrets), watched from where the log stood."""
        log_path = self.book.log_path
        self.logs.since = watching.log_sizes(self.run_dir, log_path)  # this attempt's part of every log follows
        log = fsutil.open_append(log_path)
        log_offset = os.fstat(log.fileno()).st_size
        self.logs.since[log_path] = log_offset
        self.book.log(f"attempt {n}: {' '.join(plan.argv)}")
        masked = any(len(v) >= MIN_SECRET for v in self.secrets.values())
        env = {**os.environ, **plan.env}
        self._runner = self.restarter.start_runner(plan.argv, env=env, cwd=self.cfg.cwd,
                                                   stdout=subprocess.PIPE if masked else log)
        if masked:
            mask_output(self._runner, log, self.secrets.values())  # the log is the copying thread's now
        else:
            log.close()
        watch.runner_started(self._runner, log_offset, plan.world_size)

    def _watch(self, n: int, watch: AttemptWatch) -> tuple[int | None, Failure | None, bool]:
        c = self.cfg
        runner, last_tick = watch.runner, 0.0
        masked = runner.stdout is not None
        while True:
            now = time.monotonic()
            watch.probe()
            if now - last_tick >= 1.0:
                last_tick = now
                self.book.tick(n)
                self.restarter.prewarm(n, masked, self.logs.started, after=warm.after_seconds())
            if self._stop_wanted():
                self._teardown(n, watch, grace=c.supervision.stop_grace, why="stop requested", final=True)
                return runner.returncode, None, True
            verdict = self.judge.verdict(watch.observe())
            failure = verdict.failure
            if (verdict.clean_exit or failure is not None) and self._stop_wanted():
                # The stop's signal came while this round observed (a scheduler's time limit signals this process
                # and the runner at once; DeepSpeed's runner exits 0 when its launcher dies by a signal): a stop.
                self._teardown(n, watch, grace=c.supervision.stop_grace, why="stop requested", final=True)
                return runner.returncode, None, True
            if verdict.clean_exit:
                busy = watch.busy_after(3.0)  # every node's watchdog must see none of the run's processes left
                if not busy:
                    self._teardown(n, watch, grace=1.0, why="finished", quiet=True, settled=True, final=True)
                    self._closing = watch  # closed once the run's end is recorded (run())
                    return 0, None, False
                failure = self.judge.still_busy(busy)
            if failure is not None:
                self._on_failure(n, watch, failure)
                return runner.returncode, failure, False
            time.sleep(0.1)

    def _on_failure(self, n: int, watch: AttemptWatch, failure: Failure) -> None:
        """Attempt `n` failed: the logs marked where they stood, the stacks at a stall, the rank that died first,
        the failure recorded, the next runner pre-warmed, the attempt torn down."""
        self.logs.at_failure = watching.log_sizes(self.run_dir, self.book.log_path)
        if failure.kind == "stalled":
            self._take_stacks(failure, n)
        elif failure.kind in ("rank-failed", "exit"):
            host = self.judge.host_of(failure.node) if failure.node else None
            failure.rank = watch.dead_rank(host)
            first = watch.went_first(host)
            if first is not None:  # a survivor's launcher spoke first: the failure is the rank that died before
                self.book.log(f"rank {first[1]} on {self.judge.node_name(first[0])} vanished before any rank on "
                              f"{failure.node} did: its failure, not theirs")
                failure.node, failure.rank = self.judge.node_name(first[0]), first[1]
            else:  # gone within a heartbeat of each other: the judge decides from what the failure's rank said
                failure.peer = watch.went_first(host, margin=-SAME_TIME)
                symptom = len(watch.chans) > 1 and self.judge.said_only_a_symptom(n, failure, self.logs)
                if failure.peer is None and symptom:
                    # Its rank said only that a peer went, and no other node has said which yet: wait for their
                    # heartbeats, and their launchers' lines (a peer's kill), before the teardown blurs them.
                    failure.peer = watch.gone_elsewhere(host, 2 * SAME_TIME)
                    self.logs.at_failure = watching.log_sizes(self.run_dir, self.book.log_path)
                first = failure.peer if symptom else None  # the rank the judge will name instead
            if first is not None and self.judge.await_code(n, first[0], LAUNCH_POLL + SAME_TIME):
                self.logs.at_failure = watching.log_sizes(self.run_dir, self.book.log_path)
        self.book.event("rank-failed" if failure.kind in ("rank-failed", "exit") else failure.kind,
                        attempt=n, detail=failure.detail, node=failure.node)
        self.book.log(f"failure detected: {failure.detail}")
        self.restarter.prewarm(n, watch.runner.stdout is not None, self.logs.started)
        self._teardown(n, watch, grace=self.cfg.supervision.grace, why=failure.kind,
                       final=not self.restarter.restarts_left(n))

    def _take_stacks(self, failure: Failure, n: int) -> None:
        """At a stall, before the teardown: every rank's stack (runs/views/stacks.py), kept in the run directory;
        the odd rank out goes into the failure, for its explanation."""
        from dscluster.runs.views.stacks import take_at_stall

        report, path, seconds, error = take_at_stall(self.run_dir, self.record, self.restarter.links, n)
        if report is None:
            self.book.log(f"stacks at the stall could not be taken: {error}")
            return
        odd = report.odd_one_out()
        failure.stacks = odd.describe(1) if odd else report.summary()
        failure.stacks_odd = odd is not None
        if odd is not None:
            failure.detail += f"; odd one out: {failure.stacks}"
        self.book.log(f"stacks at the stall ({seconds:.1f}s, {path}): {report.summary()}")
        self.book.event("stacks", attempt=n, seconds=round(seconds, 2), file=str(path),
                        odd_one_out=odd.describe(1) if odd else None)

    def _teardown(self, n: int, watch: AttemptWatch, *, grace: float, why: str, quiet: bool = False,
                  settled: bool = False, final: bool = False) -> None:
        """The attempt torn down on every node (watching.py), with the backend's own part (e.g. only this
        attempt's step of a scheduler's job); recorded as an event unless `quiet`."""
        done = watch.teardown(self.record.id, n, grace=grace, settled=settled, final=final,
                              cancel=lambda: self.hooks.cancel_attempt(n),
                              reap_remote=lambda hosts: remote_reap(self.record, hosts, timeout=5.0,
                                                                    runners=self.restarter.runners))
        if not quiet:
            self.book.event("teardown", why=why, seconds=done.seconds, unreachable=list(done.unreachable))

    # ---- the run -----------------------------------------------------------------------------
    def run(self) -> int:
        self.book.save(status=QUEUED if self.record.status == QUEUED else "pending", supervisor_pid=os.getpid(),
                       supervisor_host=socket.gethostname())  # QUEUED: a --wait launch waits its turn for the GPUs
        self.book.open()
        # GPU leases (runs/leases/leasing.py)
        self.leases = SupervisorLeases(self.record, self.run_dir.parent.parent, self.book.event)
        try:
            if self.leases.acquire(self._stop_wanted, self.book.save):
                return self._run()
            self._end("stopped", 130)  # stopped while queued
            return 130
        finally:
            self.leases.release()  # however the run ends: the GPUs are free for the next run
            self.book.close()
            self._kill_runner_group()
            if self._closing is not None:
                self._closing.close()  # a clean end's watchdog lines, hung up already
            self.restarter.drop()

    def _kill_runner_group(self) -> None:
        """However the supervision ends (an error too), nothing it started here outlives it: the runner's whole
        process group (pdsh, ssh clients, a scheduler's step client: the runner's death signal alone leaves them)."""
        if self._runner is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._runner.pid, signal.SIGKILL)

    def _run(self) -> int:
        """Every attempt, while restarts remain and a restart can help; then the run's end, recorded."""
        if self.record.batch_plan:  # a run continued on another world size (restart --hosts)
            self.book.event("batch", **self.record.batch_plan)
        max_attempts = self.restarter.max_attempts
        if not self.hooks.allocate():
            max_attempts = 0  # no allocation: the record says why
        exit_code, status = 1, "failed"
        self.judge.begin(self.book.progress())
        for n in range(1, max_attempts + 1):
            rc, failure, stopped = self.run_attempt(n)
            last = self.record.attempts[-1] if self.record.attempts else None
            # None: failed before the runner started (unreachable node)
            attempt = last if last is not None and last.n == n else Attempt(n, started=store.now_iso())
            attempt = dataclasses.replace(attempt, ended=store.now_iso(), exit_code=rc)
            self.book.set_attempt(attempt)
            self.book.tick(n, final=True)
            ended = self._ended_without_failure(n, attempt, failure, stopped)
            if ended is not None:
                exit_code, status = ended
                break
            exit_code, restart = self._record_failure(n, attempt, rc, failure, last=n >= max_attempts)
            if not restart:
                break
            host = self.judge.host_of(failure.node) if failure.node else None
            status = self.restarter.before_restart(n, host, failure.detail,
                                                   node_lost=failure.kind in ("node-lost", "stalled", "unreachable"))
            if status == "stopped":
                exit_code = 130
            if status != "restarting":
                break
            self.restarter.pause(time.time() - self.logs.started)
        self._end(status if status != "restarting" else "failed", exit_code)
        return exit_code

    def _ended_without_failure(self, n: int, attempt: Attempt, failure: Failure | None,
                               stopped: bool) -> tuple[int, str] | None:
        """(exit code, status) when attempt `n` ended the run otherwise than by a failure: the backend's
        time limit, a stop, a success; None when it failed."""
        # Asked after every attempt, a clean exit too: a time limit's signals can end the ranks so that the
        # runner exits 0 (seen in CI under load: a batch run cut at --time 1:00 recorded as succeeded).
        timeout = self.hooks.timed_out()
        if timeout is not None:
            self.book.set_attempt(dataclasses.replace(attempt, reason="time limit"), explanation=timeout.to_dict())
            self.book.event(f"{self.backend.name}-timeout", attempt=n, job_id=self.hooks.job_id)
            return 1, "failed"
        if stopped:
            self.book.set_attempt(dataclasses.replace(attempt, reason="stopped"))
            self.book.event("stopped", attempt=n)
            return 130, "stopped"
        if failure is None:
            self.book.set_attempt(dataclasses.replace(attempt, reason="succeeded"))
            return 0, "succeeded"
        return None

    def _record_failure(self, n: int, attempt: Attempt, rc: int | None, failure: Failure, *,
                        last: bool) -> tuple[int, bool]:
        """Attempt `n`'s failure judged (judging.py) and recorded (runbook.py); (the run's exit code so
        far, whether to restart)."""
        judged = self.judge.judge_failure(n, failure, rc, self.logs, last=last, stopping=self._stop_wanted(),
                                          progress=self.book.progress(), disk_full=self.book.disk_full)
        self.book.record_judgement(n, attempt, judged)
        return judged.exit_code, judged.restart and not self._stop_wanted()

    def _end(self, status: str, exit_code: int) -> None:
        reap(self.record.id, grace=0.5)  # what is left here: a next attempt's pre-warmed launcher that never ran
        self.restarter.close()
        self.hooks.release()
        trust.remove_runner_dir(self.record.id)
        self.book.finish(status, exit_code)


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
        record_crash(run_dir, err)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

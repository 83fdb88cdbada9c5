"""The supervisor's Slurm side (the backend's hooks, runs/supervising/hooks.py): the allocation, its steps, its time limit.

Where the allocation comes from, in order: the one recorded at launch (dscluster launch ran inside
`salloc`), the one this supervisor runs in (the batch job of `launch --sbatch`), else a new one the
run asks for itself (`salloc --no-shell`), which it alone gives back when it ends. Every attempt is
one srun step of that allocation, so restarts never wait in the queue again.

What Slurm says about the job is kept in the run record's `scheduler` (run.json's "slurm": job id, state,
nodes, time limit), which `dscluster status`, `runs` and the panel show (the backend's job_summary).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import TYPE_CHECKING, Any

from dscluster import explain as explainer
from dscluster.errors import DsclusterError
from dscluster.launcher.backends.slurm import clients as slurm

if TYPE_CHECKING:
    from dscluster.runs.records.record import RunRecord
    from dscluster.runs.supervising.hooks import HookContext

ALLOCATION_WAIT = 600.0  # how long a run waits in the queue for its allocation
CHECK_EVERY = 10.0  # how often an attempt asks Slurm whether its job still runs
ASK_AGAIN = 3  # times job_info is asked again when Slurm does not answer at an attempt's end
LOST_AFTER = 60.0  # how long Slurm may not answer for the job before the attempt is given up
# Job states in which no step of the job runs any more (srun may wait on a controller that is gone).
ENDED = frozenset({"CANCELLED", "COMPLETED", "FAILED", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                   "DEADLINE", "TIMEOUT"})


class SlurmRun:
    """The supervisor's hooks for the slurm backend (runs/supervising/hooks.py says when each is called)."""

    def __init__(self, ctx: HookContext):
        self.ctx = ctx
        cfg = ctx.launch.scheduler or {}
        self.ask = slurm.SlurmAsk(**cfg.get("ask", {}))
        self.job_id: str | None = cfg.get("job_id")
        self.own_job = bool(cfg.get("own_job"))
        self._checked: float | None = None
        self._silent_since: float | None = None

    def lost(self, now: float) -> explainer.Explanation | None:
        """Asked about every second while an attempt runs (Slurm itself every CHECK_EVERY s): the explanation
        when Slurm no longer runs the job (it ended, or its controller has not answered for LOST_AFTER s).
        Slurm watches the nodes, but srun waits for a controller that is gone, and the run would wait with it."""
        if not self.job_id or (self._checked is not None and now - self._checked < CHECK_EVERY):
            return None
        self._checked = now
        info = slurm.job_info(self.job_id)
        state = (info.get("JobState") or "").split()[0] if info else ""
        if info:
            self._silent_since = None
            if state in ENDED and state != "TIMEOUT":  # a time limit has its own explanation
                return explainer.custom(
                    "slurm-job-ended", "Slurm job {job} ended ({state}) while the run's step still waited on it.",
                    "See why: scontrol show job {job} (or sacct -j {job}); then dscluster restart {run} resumes "
                    "from the last committed checkpoint.", f"JobState={state} Reason={info.get('Reason')}",
                    retry=False, job=self.job_id, state=state, run=self.ctx.record.id)
            return None
        self._silent_since = now if self._silent_since is None else self._silent_since
        if now - self._silent_since < LOST_AFTER:
            return None
        return explainer.custom(
            "slurm-unreachable", "Slurm has not answered for job {job} for {s} s: its controller is down, or the job "
            "is gone; the run's step cannot be watched any more.",
            "Check Slurm (scontrol ping; sinfo); once it answers, dscluster restart {run} resumes from the last "
            "committed checkpoint.", f"scontrol show job {self.job_id}: no answer", retry=False, job=self.job_id,
            s=f"{now - self._silent_since:.0f}", run=self.ctx.record.id)

    def _record(self, **fields: Any) -> None:
        self.ctx.save(scheduler={**(self.ctx.record.scheduler or {}), **fields})

    def allocate(self) -> bool:
        """Find or ask for the allocation and record its nodes; False (with the explanation recorded) when
        Slurm does not grant one."""
        ctx = self.ctx
        try:
            if self.job_id is None and slurm.current_job():
                self.job_id = slurm.current_job()  # the batch job this supervisor runs in
            if self.job_id is None:
                ctx.log(f"asking Slurm for {' '.join(slurm.salloc_argv(self.ask, ctx.record.id))}")
                self.job_id = slurm.allocate(self.ask, ctx.record.id, ALLOCATION_WAIT)
                self.own_job = True
            info = slurm.job_info(self.job_id)
            nodes = slurm.hostnames(info.get("NodeList") or os.environ.get("SLURM_JOB_NODELIST", ""))
        except DsclusterError as err:
            ctx.save(explanation=explainer.custom("slurm-allocation", "Slurm did not give the run its nodes: {err}",
                                                  "{hint}", retry=False, err=err.message,
                                                  hint=err.hint or "sinfo; dscluster doctor").to_dict())
            return False
        # srun (DeepSpeed's SlurmRunner) runs its steps in the job named here.
        os.environ["SLURM_JOB_ID"] = os.environ["SLURM_JOBID"] = str(self.job_id)
        hosts = ctx.launch.hosts or tuple((h, self.ask.tasks_per_node) for h in nodes[: self.ask.nodes] or nodes)
        launch = dataclasses.replace(ctx.launch, hosts=hosts, scheduler={**(ctx.launch.scheduler or {}), "job_id": self.job_id,
                                                                  "own_job": self.own_job})
        ctx.save(launch=launch, hostfile="".join(f"{h} slots={s}\n" for h, s in hosts),
                 world_size=sum(int(s) for _, s in hosts))
        names = list(ctx.launch.host_names)
        self._record(job_id=self.job_id, own_job=self.own_job, state=info.get("JobState"),
                     partition=info.get("Partition"), nodes=names,
                     time_limit=info.get("TimeLimit"), end_time=info.get("EndTime"))
        ctx.log(f"Slurm job {self.job_id} on {', '.join(names)}")
        ctx.event("slurm-allocation", job_id=self.job_id, own=self.own_job, nodes=names)
        return True

    def cancel_attempt(self, attempt: int) -> None:
        """Only this attempt's own step of the job."""
        if self.job_id and attempt:
            slurm.cancel_step(self.job_id, self.ctx.record.id, attempt)

    def timed_out(self) -> explainer.Explanation | None:
        """When the job reached its time limit: recorded as such, with how to resume."""
        if not self.job_id:
            return None
        info = slurm.job_info(self.job_id)
        for _ in range(ASK_AGAIN):  # no answer is not "no": a controller busy ending the job answers late
            if info:
                break
            time.sleep(2.0)
            info = slurm.job_info(self.job_id)
        if not slurm.timed_out(info):
            return None
        self._record(state="TIMEOUT", ended_by="time limit")
        step = self.ctx.record.last_checkpoint_step
        fix = ("Resubmit with a longer --time: dscluster restart {run} resumes from step {step}." if step is not None
               else "Resubmit with a longer --time: dscluster restart {run} (no step was committed: it starts over).")
        return explainer.custom(
            "slurm-timeout", "Slurm job {job} reached its time limit ({limit}) and ended the run.", fix,
            f"JobState={info.get('JobState')} Reason={info.get('Reason')}", retry=False, job=self.job_id,
            limit=info.get("TimeLimit", "?"), run=self.ctx.record.id, step=step if step is not None else "-")

    @staticmethod
    def force_stop(record: RunRecord) -> bool:
        return force_stop(record)

    def release(self) -> None:
        """Give back the allocation the run asked for itself; one it was given stays its owner's."""
        if self.job_id and self.own_job:
            slurm.cancel_job(self.job_id)
        info = slurm.job_info(self.job_id) if self.job_id else {}
        if info and (self.ctx.record.scheduler or {}).get("state") != "TIMEOUT":
            self._record(state=info.get("JobState"))


def force_stop(record: RunRecord) -> bool:
    """`stop` when the supervisor cannot (gone, or its batch job still queued): cancel the run's own job
    when the run owns it (it asked for it, or it is the run's batch job), else only the run's steps.
    Returns whether the record names a Slurm job at all."""
    info = record.scheduler or {}
    job = info.get("job_id")
    if not job:
        return False
    if info.get("own_job") or info.get("batch"):
        slurm.cancel_job(job)
    else:
        for n in range(1, len(record.attempts) + 1):
            slurm.cancel_step(job, record.id, n, wait=3.0)
    return True

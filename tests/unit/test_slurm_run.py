"""The supervisor's Slurm side without a cluster: when an attempt stops waiting on a job Slurm no longer runs."""

from __future__ import annotations

from types import SimpleNamespace

from dscluster.launcher.backends.slurm import supervise as slurm_run
from dscluster.runs.supervising.hooks import HookContext


def _run(monkeypatch, answers):
    """A SlurmRun for job 7 whose `scontrol show job` answers come from `answers` (one per check)."""
    it = iter(answers)
    monkeypatch.setattr(slurm_run.slurm, "job_info", lambda job: next(it))
    record = SimpleNamespace(id="r-1", launch=SimpleNamespace(scheduler={"job_id": "7", "ask": {}}))
    return slurm_run.SlurmRun(HookContext(lambda: record, save=None, event=None, log=None))


def test_a_running_job_is_left_alone_and_asked_about_every_ten_seconds(monkeypatch):
    run = _run(monkeypatch, [{"JobState": "RUNNING"}] * 3)
    assert run.lost(100.0) is None
    assert run.lost(105.0) is None  # not asked again yet (the iterator would run out)
    assert run.lost(110.0) is None and run.lost(120.0) is None


def test_a_controller_that_stops_answering_ends_the_attempt_after_a_minute_with_no_restart(monkeypatch):
    run = _run(monkeypatch, [{"JobState": "RUNNING"}] + [{}] * 10)
    assert run.lost(0.0) is None
    t = 10.0
    while (exp := run.lost(t)) is None:
        t += 10.0
        assert t < 200
    assert t - 10.0 >= slurm_run.LOST_AFTER  # silent since the first unanswered check
    d = exp.to_dict()
    assert d["signature"] == "slurm-unreachable" and d["retry"] is False
    assert "job 7" in d["cause"] and "scontrol ping" in d["fix"] and "dscluster restart r-1" in d["fix"], d


def test_a_job_slurm_ended_ends_the_attempt_at_once_but_a_time_limit_is_left_to_its_own_explanation(monkeypatch):
    ended = _run(monkeypatch, [{"JobState": "NODE_FAIL", "Reason": "NodeDown"}])
    d = ended.lost(0.0).to_dict()
    assert d["signature"] == "slurm-job-ended" and "NODE_FAIL" in d["cause"] and "sacct -j 7" in d["fix"], d
    timed_out = _run(monkeypatch, [{"JobState": "TIMEOUT"}])
    assert timed_out.lost(0.0) is None

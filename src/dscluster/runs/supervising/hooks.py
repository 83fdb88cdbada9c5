"""The supervisor's hooks into a run's launcher backend (launcher/backends/base.py names them).

A backend that needs the supervisor to do more than start DeepSpeed's runner and watch it (a scheduler:
ask for an allocation, watch the job, cancel only the attempt's own step, explain the time limit, give the
allocation back) names a class with these methods as its `hooks`; every other backend gets `NoHooks`,
whose hooks do nothing. The supervisor calls them at fixed points of a run:

    allocate()            once, before the first attempt; False: the run cannot start (the hook says why)
    lost(now)             while an attempt runs (often): an Explanation when the attempt cannot go on
    cancel_attempt(n)     at every teardown, before the runner's own process group goes
    timed_out()           after an attempt ended stopped or failed: an Explanation of a time limit, or None
    release()             once, when the run ends however it ends
    force_stop(record)    `dscluster stop` without a live supervisor: True when the hook stopped the ranks
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dscluster.launcher import backends

if TYPE_CHECKING:
    from dscluster import explain as explainer
    from dscluster.runs.records.record import RunRecord
    from dscluster.runs.supervising.supervisor import Supervisor


class NoHooks:
    job_id: str | None = None

    def __init__(self, sup: Supervisor | None = None):
        self.sup = sup

    def allocate(self) -> bool:
        return True

    def lost(self, now: float) -> explainer.Explanation | None:
        return None

    def cancel_attempt(self, attempt: int) -> None:
        return None

    def timed_out(self) -> explainer.Explanation | None:
        return None

    def release(self) -> None:
        return None

    @staticmethod
    def force_stop(record: RunRecord) -> bool:
        return False


def hooks_class(launcher: str | None) -> type:
    """The hooks class of the backend called `launcher` (NoHooks when it names none)."""
    ref = backends.get(launcher).hooks
    if not ref:
        return NoHooks
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def hooks_for(sup: Supervisor):
    return hooks_class(sup.cfg.launcher)(sup)

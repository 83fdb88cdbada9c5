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

A hooks class is built with a `HookContext`, not the supervisor: the run's record as it stands and the
three writers a hook may use (record fields, an event, a line in the launcher log).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dscluster.launcher import backends

if TYPE_CHECKING:
    from dscluster import explain as explainer
    from dscluster.runs.records.record import LaunchSpec, RunRecord


@dataclass(frozen=True)
class HookContext:
    """What a backend's hooks get of a supervision: `current()` the run record as it stands now, `save(**fields)`
    record fields, `event(name, **fields)` an event, `log(text)` a line of the supervisor's in the launcher log."""

    current: Callable[[], RunRecord]
    save: Callable[..., None]
    event: Callable[..., None]
    log: Callable[[str], None]

    @property
    def record(self) -> RunRecord:
        return self.current()

    @property
    def launch(self) -> LaunchSpec:
        """What every attempt executes (under a scheduler its hosts are recorded once allocated)."""
        return self.current().launch

    @classmethod
    def of(cls, book: Any) -> HookContext:
        """The context over a runs.supervising.runbook.RunBook (the supervisor's recording part)."""
        return cls(lambda: book.record, book.save, book.event, book.log)


class NoHooks:
    job_id: str | None = None

    def __init__(self, ctx: HookContext | None = None):
        self.ctx = ctx

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


def hooks_class(backend: backends.Backend) -> type:
    """The hooks class of `backend` (NoHooks when it names none)."""
    ref = backend.hooks
    if not ref:
        return NoHooks
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def hooks_for(backend: backends.Backend, ctx: HookContext):
    """The hooks of `backend`, built over `ctx`."""
    return hooks_class(backend)(ctx)

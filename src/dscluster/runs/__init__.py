"""Runs: the run store on shared storage, the detached supervisor, teardown and restart.

`launch_run(shared, record, secrets)` starts a supervised run and returns its id; `store.list_runs`
and `store.load_run` read them back.
"""

from __future__ import annotations


def launch_run(*args, **kwargs) -> str:
    from dscluster.runs.start import launch_run as _launch_run

    return _launch_run(*args, **kwargs)

"""Stopping a run: graceful (the supervisor tears down with a grace period), then forced.

Forced means: SIGKILL the supervisor (if it is on this machine) and reap the run's processes on every
node over ssh, by the run's own DSCLUSTER_RUN_ID, then write the record as stopped.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from dscluster.console import WARN
from dscluster.errors import DsclusterError
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr
from dscluster.runs.preparing.start import supervisor_alive
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord
from dscluster.runs.records.verify import Verified, may_signal, record_to_act_on
from dscluster.runs.supervising.supervisor import STOP_FILE


def _newest(run_dir: Path, verified: Verified) -> Verified:
    """The record as it is now when it still passes verification, else the one verified before: root's forced
    stop never writes (as root's own) a record someone else rewrote."""
    try:
        return record_to_act_on(run_dir)
    except DsclusterError:
        return verified


def request_stop(run_dir: Path, verified: Verified) -> None:
    # The run dir is the node user's to write: never a write by name through whatever is there now.
    try:
        atomic_write_text(Path(run_dir) / STOP_FILE, store.now_iso() + "\n")
    except OSError:
        pass  # a full disk: the signal below still reaches a supervisor on this machine, else the forced stop
    _signal(verified, signal.SIGTERM)


def _signal(verified: Verified, signum: int) -> None:
    """Signal the run's supervisor: the pid of the verified record, only a process of the record's writer."""
    if may_signal(verified) and supervisor_alive(verified.record):
        try:
            os.kill(int(verified.record.supervisor_pid), signum)
        except (ProcessLookupError, PermissionError):
            pass


def wait_finished(run_dir: Path, timeout: float) -> RunRecord:
    deadline = time.monotonic() + timeout
    record = store.read_record(run_dir)
    while record.status not in store.FINISHED and time.monotonic() < deadline:
        if supervisor_alive(record) is False and record.supervisor_pid:
            break  # nobody will finish the record: go forced
        time.sleep(0.3)
        record = store.read_record(run_dir)
    return record


def stop_run(run_dir: Path, *, timeout: float | None = None) -> tuple[RunRecord, bool]:
    """Stop the run; returns (final record, forced?). What it acts on (the supervisor's pid, the hosts) comes
    from the verified record (runs/records/verify.py), never from one rewritten meanwhile."""
    from dscluster.runs.supervising.nodes import end_masters, remote_reap

    verified = record_to_act_on(Path(run_dir))
    record = verified.record
    grace = float(record.launch.supervision.stop_grace)
    request_stop(run_dir, verified)
    if (record.scheduler or {}).get("batch") and not record.supervisor_pid:
        timeout = 0.0  # its batch job has not started: nothing runs yet, cancel the job
    seen = wait_finished(run_dir, timeout if timeout is not None else grace + 15.0)
    if seen.status in store.FINISHED:
        return seen, False
    verified = _newest(Path(run_dir), verified)  # a supervisor started meanwhile has written its pid
    record = verified.record
    _signal(verified, signal.SIGKILL)
    from dscluster.runs.supervising.hooks import hooks_class

    if hooks_class(record.launch.backend).force_stop(record):
        outcome = {record.launch.launcher: "cancelled"}  # the scheduler ends the ranks; the nodes need no ssh
    else:
        outcome = remote_reap(record, list(record.launch.host_names) or ["localhost"])
        end_masters(record)
    from dscluster.runs.leases.leasing import release

    release(record, Path(run_dir).parent.parent)  # the supervisor that held its GPU leases is gone
    record = _newest(Path(run_dir), verified).record.replace(status="stopped", exit_code=130, ended=store.now_iso())
    try:
        store.write_record(run_dir, record)
        store.append_event(run_dir, "stopped", forced=True, nodes=outcome)
    except OSError as err:
        # The processes are gone on every node; only the record says otherwise (e.g. a full disk): `status`
        # shows the run lost, and `restart` takes a lost run.
        print(f"{WARN} " + tr("the run is stopped on every node, but its record could not be written ({err}); "
                              "status shows it as lost until then, and dscluster restart {id} works",
                              err=err, id=record.id), file=sys.stderr)
    return record, True

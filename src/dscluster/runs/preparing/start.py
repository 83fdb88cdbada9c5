"""Create a run and start its detached supervisor: `launch_run(...)` -> run id.

The supervisor must survive the terminal or notebook kernel that started it: it runs in its own
session (setsid), with its hand-off (record and secrets) on stdin and output to
<run>/logs/supervisor.log, and is started through a short-lived intermediate process that exits at once (a double fork), so no long-lived
caller (a Jupyter kernel) is left with a zombie child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dscluster import fsutil
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord
from dscluster.safepython import module_argv

# Runs with -I (isolated: stdlib only, nothing from the caller's directory or environment). Its stdin
# (the hand-off) and the log descriptor pass on to the supervisor; it exits at once (the double fork).
_DETACH = r"""
import json, os, subprocess, sys
argv, log = json.loads(sys.argv[1]), int(sys.argv[2])
p = subprocess.Popen(argv, stdin=sys.stdin, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                     close_fds=True, cwd="/")
print(p.pid)
"""


def start_supervisor(run_dir: Path, record: RunRecord, secrets: dict[str, str] | None = None) -> int:
    """Start the supervisor of run_dir detached; returns its pid.

    The run's record and secret values reach it on its stdin, never through the run directory: the
    node user can write there, and what the supervisor executes (interpreter, argv, ssh settings,
    environment) must come from the launching user alone. Its log is opened here by fsutil's
    no-symlink rule and handed down as a descriptor."""
    argv = module_argv(sys.executable, "dscluster.runs.supervising.supervisor") + [str(run_dir)]
    handoff = json.dumps({"record": record.to_json(), "secrets": secrets or {}}, default=str)
    with fsutil.open_append(Path(run_dir) / "logs" / "supervisor.log") as log:
        out = subprocess.run([sys.executable, "-I", "-c", _DETACH, json.dumps(argv), str(log.fileno())],
                             input=handoff, capture_output=True, text=True, timeout=30, check=True,
                             pass_fds=(log.fileno(),), cwd="/")
    return int(out.stdout.strip())


def launch_run(shared: Path, record: RunRecord, secrets: dict[str, str] | None = None,
               files: dict[str, str] | None = None, checks_s: float | None = None) -> str:
    """Write the run record (already validated by the caller) and the `files` the ranks read (name -> text,
    an inline ds_config), then start its supervisor. `checks_s`: how long the caller's checks took (the
    "created" event keeps it: where a launch's first seconds went)."""
    run_dir = store.create_run(shared, record, files)
    pid = start_supervisor(run_dir, record, secrets)
    store.append_event(run_dir, "created", supervisor_pid=pid, **({} if checks_s is None else {"checks_s": checks_s}))
    return record.id


def supervisor_alive(record: RunRecord) -> bool | None:
    """True/False when the supervisor runs on this host; None when it runs elsewhere (cannot tell)."""
    import socket

    pid = record.supervisor_pid
    if not pid:
        return None
    if record.supervisor_host not in (None, socket.gethostname()):
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A recycled pid: make sure it is our supervisor for this run.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        return b"dscluster.runs.supervising.supervisor" in cmdline and any(record.id.encode() in c for c in cmdline)
    except OSError:
        return False


LOST = "lost"


def shown_status(record: RunRecord) -> str:
    """The status to show: the record's, except "lost" for an active run whose supervisor is gone from
    this host (killed, or the machine rebooted). Nothing will ever update such a record again, so
    showing "running" would be false, and waiting for it would never end."""
    status = str(record.status or "pending")
    if status in store.ACTIVE and supervisor_alive(record) is False:
        return LOST
    return status


def lost_explanation(record: RunRecord) -> dict[str, Any]:
    return {"signature": "supervisor-lost",
            "cause": "the run's supervisor is gone (killed, or its machine rebooted); the nodes' watchdogs stop "
                     "the ranks",
            "fix": f"dscluster stop {record.id} (cleans every node), then dscluster restart {record.id}"}

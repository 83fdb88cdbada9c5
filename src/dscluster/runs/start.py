"""Create a run and start its detached supervisor: `launch_run(...)` -> run id.

The supervisor must survive the terminal or notebook kernel that started it: it runs in its own
session (setsid), with stdin from /dev/null and output to <run>/logs/supervisor.log, and is started
through a short-lived intermediate process that exits at once (a double fork), so no long-lived
caller (a Jupyter kernel) is left with a zombie child.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dscluster.runs import store
from dscluster.runs.nodes import write_secrets

_DETACH = r"""
import os, subprocess, sys
log = open(sys.argv[2], "ab")
p = subprocess.Popen([sys.executable, "-m", "dscluster.runs.supervisor", sys.argv[1]], stdin=subprocess.DEVNULL,
                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True, cwd="/")
print(p.pid)
"""


def start_supervisor(run_dir: Path) -> int:
    """Start the supervisor of run_dir detached; returns its pid."""
    out = subprocess.run([sys.executable, "-c", _DETACH, str(run_dir), str(Path(run_dir) / "logs" / "supervisor.log")],
                         capture_output=True, text=True, timeout=30, check=True)
    return int(out.stdout.strip())


def launch_run(shared: Path, record: dict[str, Any], secrets: dict[str, str] | None = None) -> str:
    """Write the run record (already validated by the caller) and start its supervisor."""
    run_dir = store.create_run(shared, record)
    write_secrets(run_dir, secrets or {})
    pid = start_supervisor(run_dir)
    store.append_event(run_dir, "created", supervisor_pid=pid)
    return record["id"]


def supervisor_alive(record: dict[str, Any]) -> bool | None:
    """True/False when the supervisor runs on this host; None when it runs elsewhere (cannot tell)."""
    import socket

    pid = record.get("supervisor_pid")
    if not pid:
        return None
    if record.get("supervisor_host") not in (None, socket.gethostname()):
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
        return b"dscluster.runs.supervisor" in cmdline and any(str(record.get("id")).encode() in c for c in cmdline)
    except OSError:
        return False


LOST = "lost"


def shown_status(record: dict[str, Any]) -> str:
    """The status to show: the record's, except "lost" for an active run whose supervisor is gone from
    this host (killed, or the machine rebooted). Nothing will ever update such a record again, so
    showing "running" would be false, and waiting for it would never end."""
    status = str(record.get("status") or "pending")
    if status in store.ACTIVE and supervisor_alive(record) is False:
        return LOST
    return status


def lost_explanation(record: dict[str, Any]) -> dict[str, Any]:
    return {"signature": "supervisor-lost",
            "cause": "the run's supervisor is gone (killed, or its machine rebooted); the nodes' watchdogs stop "
                     "the ranks",
            "fix": f"dscluster stop {record.get('id')} (cleans every node), then dscluster restart {record.get('id')}"}

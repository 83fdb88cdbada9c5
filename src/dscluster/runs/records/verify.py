"""The run record someone acts on (`stop`, `restart`, the panel's buttons, `Run.stop()`): verified first.

run.json lies in the run directory, which others may write: the node user owns the directories of root's
cluster runs, and whoever owns a directory can put any file in it under any name. What `stop` and `restart`
act on (the owner check, the supervisor's pid, the program, arguments and hosts) is taken only from a record
that
- is a plain file, opened by descriptor without following a symlink, with one link, that only its owner can
  write (the file's owner is who wrote it: no one can make a file that is someone else's);
- was written by root or by the user it names as its owner (a record with no owner: its writer owns it);
- names the run of the directory it lies in (a record moved in from another run is not that run's).

Anything else is refused (NotOwner: exit 7, HTTP 403) with who wrote it; reading a run (status, logs, the
panel) is unaffected: it is data, shown as such.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from dscluster import fsutil
from dscluster.errors import NotOwner, RunError
from dscluster.i18n import tr
from dscluster.runs.records.owner import user_name
from dscluster.runs.records.record import RunRecord


@dataclass(frozen=True)
class Verified:
    """A record fit to act on, and the uid that wrote it (0: root)."""

    record: RunRecord
    writer: int


def _refuse(message: str, run_dir: Path) -> NotOwner:
    return NotOwner(message, tr("someone who can write {dir} changed its record: nothing was done. Compare it with "
                                "the run's events (dscluster status {id}) and, as root, move that run directory out "
                                "of runs/", dir=run_dir, id=run_dir.name), setting="RUN")


def _read(path: Path) -> tuple[bytes, os.stat_result]:
    try:
        fd = fsutil.open_file(path)
    except FileNotFoundError:
        raise RunError(tr("no run record in {path}", path=path.parent), tr("list runs with: dscluster runs")) from None
    except fsutil.UnsafePath:
        raise _refuse(tr("the run record {path} is a link or a special file: it is not acted on", path=path),
                      path.parent) from None
    try:
        st = os.fstat(fd)
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(), st
    finally:
        os.close(fd)


def record_to_act_on(run_dir: Path) -> Verified:
    """The record of `run_dir`, verified as the module says; raises NotOwner (or RunError: none, damaged)."""
    run_dir = Path(run_dir)
    path = run_dir / "run.json"
    data, st = _read(path)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_mode & 0o022:
        raise _refuse(tr("the run record {path} is not a plain file that only its writer can change: it is not "
                         "acted on", path=path), run_dir)
    try:
        record = RunRecord.from_json(json.loads(data.decode("utf-8")))
    except (ValueError, UnicodeDecodeError, TypeError, KeyError, AttributeError) as exc:
        raise RunError(tr("the run record {path} is damaged ({error})", path=path, error=exc),
                       tr("move that run directory out of runs/ (its logs and checkpoints are unaffected) or restore "
                          "run.json from a backup")) from None
    if record.id != run_dir.name:
        raise _refuse(tr("the run record {path} names run {other}, not {id}: it is not acted on", path=path,
                         other=record.id, id=run_dir.name), run_dir)
    writer = st.st_uid
    if writer != 0 and record.owner and str(record.owner) != user_name(writer):
        raise _refuse(tr("the run record {path} was written by {writer}, yet names {owner} as the run's owner: it "
                         "is not acted on", path=path, writer=user_name(writer), owner=record.owner), run_dir)
    return Verified(record, writer)


def process_uid(pid: int) -> int | None:
    """The real uid of process `pid` (None: gone)."""
    try:
        return os.stat(f"/proc/{int(pid)}").st_uid
    except (OSError, ValueError):
        return None


def may_signal(verified: Verified) -> bool:
    """Whether the record's supervisor pid is a process of the record's writer (root's runs: root's), so a
    stop never signals a process of someone else the record points at."""
    pid = verified.record.supervisor_pid
    return bool(pid) and process_uid(int(pid)) == verified.writer

"""Who owns a run: the OS user who launched it (`RunRecord.owner`). Everyone sees every run; only its owner,
or an admin (root, uid 0), may stop or restart it: `check_may_control` is the one rule the CLI, the Python
API and the panel's handlers go through (the views call runs.service, which calls it).

A record from before owners were recorded has no `owner`: the owner of its run.json (the file's uid) is
taken instead, which is the launching user for every run started by a user other than root.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from dscluster.errors import NotOwner
from dscluster.i18n import tr
from dscluster.runs.records.record import RunRecord


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)  # a uid with no account here (a container's): its number names it


def current_user() -> str:
    """The effective OS user's name: who launches, stops, restarts (the lab's own user in the panel)."""
    return user_name(os.geteuid())


def is_admin() -> bool:
    return os.geteuid() == 0


def owner_of(record: RunRecord, run_dir: Path | None = None) -> str | None:
    """The run's owner: as recorded, else (an older record) the owner of its run.json; None when unknown."""
    if record.owner:
        return str(record.owner)
    if run_dir is None:
        return None
    try:
        return user_name(os.stat(Path(run_dir) / "run.json", follow_symlinks=False).st_uid)
    except OSError:
        return None


def may_control(record: RunRecord, run_dir: Path | None = None) -> bool:
    """Whether this user may stop or restart the run: its owner, or root."""
    return is_admin() or owner_of(record, run_dir) in (None, current_user())


def check_may_control(record: RunRecord, run_dir: Path | None, action: str) -> None:
    """Refuse (NotOwner: exit 7, HTTP 403) to `action` ("stop", "restart") a run another user owns."""
    if may_control(record, run_dir):
        return
    owner = owner_of(record, run_dir)
    what = tr("stop") if action == "stop" else tr("restart")
    raise NotOwner(tr("run {id} belongs to {owner}: only {owner} (or root) may {action} it; you are {me}",
                      id=record.id, owner=owner, action=what, me=current_user()),
                   tr("ask {owner} to {action} it, or start your own run (dscluster launch ...)", owner=owner,
                      action=what), setting="RUN")


def check_restart_identity(record: RunRecord, run_dir: Path | None = None) -> None:
    """Refuse, with the command that works, root's restart of a person's run: its ranks reach the nodes as
    that person with their own cluster key (cluster/spec.py as_person), which root does not hold, and the
    cluster key opens no person's account. The person restarts it, or root does as them."""
    spec = record.launch.cluster_spec
    owner = owner_of(record, run_dir)
    if not is_admin() or spec is None or owner in (None, "root") or spec.ssh_user != owner:
        return
    raise NotOwner(tr("run {id} ran as {owner} on the nodes, with {owner}'s own cluster key, which root does not "
                      "hold", id=record.id, owner=owner),
                   tr("restart it as {owner}: runuser -u {owner} -- dscluster restart {id}", owner=owner, id=record.id),
                   setting="RUN")


def check_may_restart(record: RunRecord, run_dir: Path | None) -> None:
    """`check_may_control` for a restart, then `check_restart_identity`."""
    check_may_control(record, run_dir, "restart")
    check_restart_identity(record, run_dir)

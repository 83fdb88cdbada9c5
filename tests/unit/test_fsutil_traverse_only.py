"""The rank-side writers (fsutil and everything written through it: the trainer's metrics, checkpoints'
COMMIT.json, `dscluster.log`) work for the node user on every layout the product creates or documents:
a shared directory whose ancestors that user may traverse (x) but not read (r) - root's home with the
ACL `sim up` sets, a mode-711 home, an NFS export - keeping the no-symlink rule there.

Made for real as root: a private ancestor (0700 + an ACL granting the node user x, or mode 0711), a
shared directory the node user owns below it, and the writers run in a child process with the node
user's uid. The old walk opened every ancestor for reading and failed with EACCES on the first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import traceback
from pathlib import Path

import pytest

from dscluster import fsutil

NODE_UID = 54322

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's layout")


def as_node_user(fn) -> None:
    """Run `fn` in a child process with NODE_UID's uid and gid; its exception fails the test here."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's teardown
        os.close(r)
        code = 0
        try:
            os.setgroups([])
            os.setgid(NODE_UID)
            os.setuid(NODE_UID)
            fn()
        except BaseException:  # noqa: BLE001 - everything goes back to the parent
            os.write(w, traceback.format_exc().encode())
            code = 1
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        report = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, report


@pytest.fixture(params=["acl", "mode711"])
def shared(request):
    """<private>/home/shared: <private> is root's own (0700 + `u:NODE_UID:x`, as `sim up` grants, or
    0711, a home on a real server); home is 0711 too; shared is the node user's."""
    base = Path(tempfile.mkdtemp(prefix="dsc-traverse-", dir="/var/tmp"))
    try:
        if request.param == "acl":
            from dscluster.sim.nodeuser import grant_traverse  # noqa: PLC0415

            os.chmod(base, 0o700)
            grant_traverse(base, NODE_UID)
        else:
            os.chmod(base, 0o711)
        home = base / "home"
        home.mkdir(mode=0o711)
        os.chmod(home, 0o711)
        sh = home / "shared"
        sh.mkdir()
        os.chown(sh, NODE_UID, NODE_UID)
        yield sh
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_node_user_writes_state_below_traverse_only_ancestors(shared):
    run = shared / "runs" / "r1"

    def writers():
        with pytest.raises(PermissionError):
            os.listdir(shared.parent)  # the layout really is traverse-only
        fsutil.atomic_write_json(run / "ds_config.resolved.json", {"a": 1})  # makes runs/r1 (mkdir -p)
        fsutil.append_jsonl(run / "metrics.jsonl", {"step": 1, "loss": 2.5})
        (run / "logs").mkdir()
        with fsutil.open_append(run / "logs" / "rank0.log") as f:
            f.write(b"hello\n")
        fsutil.make_dir(run / "checkpoints" / "step-1")
        fsutil.atomic_write_text(run / "checkpoints" / "step-1" / "COMMIT.json", '{"step": 1}')
        assert fsutil.read_jsonl(run / "metrics.jsonl")[0] == [{"step": 1, "loss": 2.5}]
        assert fsutil.read_bytes(run / "checkpoints" / "step-1" / "COMMIT.json") == b'{"step": 1}'
        os.close(fsutil.open_beneath(run, "logs/rank0.log"))

    as_node_user(writers)
    assert (run / "logs" / "rank0.log").read_bytes() == b"hello\n"
    assert (run / "ds_config.resolved.json").stat().st_uid == NODE_UID


def test_dscluster_log_and_the_trainers_metrics_writer(shared, monkeypatch):
    """The README's one line, `dscluster.log(step=..., loss=...)`, on rank 0 of a run whose directory is
    below traverse-only ancestors (it crashed rank 0 with EACCES on the ancestor)."""
    import dscluster  # noqa: PLC0415
    from dscluster.runs.records import metrics

    run = shared / "runs" / "r2"
    run.mkdir(parents=True)
    os.chown(run, NODE_UID, NODE_UID)
    monkeypatch.setenv("DSCLUSTER_RUN_DIR", str(run))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(metrics, "_writer", None)

    def rank0():
        assert dscluster.log(step=3, loss=1.25) is True

    as_node_user(rank0)
    records, _ = metrics.read(run)
    assert [(r["step"], r["loss"]) for r in records] == [(3, 1.25)]


def test_no_symlink_rule_still_holds_below_traverse_only_ancestors(shared):
    """A symlink planted in the shared directory is still refused, and the walk's descriptors
    (O_PATH) cannot be used to write through one either."""
    victim_dir = shared.parent.parent / "private"
    victim_dir.mkdir(mode=0o700)
    victim = victim_dir / "v.txt"
    victim.write_text("mine")
    os.symlink(victim_dir, shared / "logs")
    os.lchown(shared / "logs", NODE_UID, NODE_UID)
    with pytest.raises(fsutil.UnsafePath):
        fsutil.append_jsonl(shared / "logs" / "v.txt", {"x": 1})
    with pytest.raises(fsutil.UnsafePath):
        fsutil.atomic_write_text(shared / "logs" / "v.txt", "x")
    with pytest.raises(fsutil.UnsafePath):
        fsutil.open_beneath(shared, "logs/v.txt")
    assert victim.read_text() == "mine"

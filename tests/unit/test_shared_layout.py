"""The ownership model of the shared storage (dscluster/sharedlayout.py, docs/trust-model.md), made for real as
root: a shared directory that is the node user's (as `sim up` makes it), the README's order (root's demo first
made runs/ and data/ as root's 0755), a person after it; a symlink or another user's directory in the way; and
metrics.jsonl, which root's supervisor and rank 0 (the node user) both append to."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from dscluster import sharedlayout
from dscluster.cluster.spec import parse_spec
from dscluster.errors import ConfigError
from dscluster.node import accounts
from dscluster.runs.records import store
from dscluster.runs.records.metrics import MonitorBridge
from dscluster.runs.records.record import LaunchSpec, RunRecord

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's layout")
NODE, PERSON = 54321, 54322  # uids with no account: the kernel needs none


def _as(uid: int, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def tmp_path():
    """A directory every user can traverse (pytest's own is root's 0700)."""
    path = Path(tempfile.mkdtemp(prefix="dsc-layout-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def shared(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, NODE, NODE)  # the node user's, as `sim up` makes it
    return shared


def _model(path: Path) -> tuple[int, int]:
    st = os.stat(path, follow_symlinks=False)
    return st.st_uid, stat.S_IMODE(st.st_mode)


def test_a_demo_first_then_the_team(shared):
    # root's demo first: runs/ and data/ root's 0755 (data/ds_configs too), as an older dscluster left them
    for name in ("runs", "data", "data/ds_configs"):
        (shared / name).mkdir(mode=0o755)
    assert _as(PERSON, "mkdir", str(shared / "runs" / "alice-run")).returncode != 0  # the failure people met
    assert sharedlayout.ensure(shared) == []
    for name in sharedlayout.COMMON:
        assert _model(shared / name) == (0, 0o1777), name
    # a person makes their own run and data there; the node user (the shared dir's owner) cannot rename it
    assert _as(PERSON, "mkdir", str(shared / "runs" / "alice-run")).returncode == 0
    assert _as(PERSON, "mkdir", str(shared / "data" / "alice-data")).returncode == 0
    moved = _as(NODE, "mv", str(shared / "runs" / "alice-run"), str(shared / "runs" / "x"))
    assert moved.returncode != 0 and (shared / "runs" / "alice-run").is_dir()
    assert sharedlayout.ensure(shared) == []  # again: nothing to change


def test_the_node_user_cannot_rename_or_replace_the_top_level_dirs(shared):
    """A hostile node user who provides the shared dir (as on the simulated cluster and most NFS exports): the
    owner of a directory may rename any entry of it, sticky or not, so `<shared>` itself becomes root's, the
    node user's own group keeping its write (its code, its files) and sticky keeping it to its own entries."""
    (shared / ".dscluster").mkdir(mode=0o755)  # root's (`sim up`)
    assert sharedlayout.ensure(shared) == []
    st = os.stat(shared)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, NODE, 0o1775)
    for name in ("runs", "users", "data", ".dscluster"):
        moved = _as(NODE, "mv", str(shared / name), str(shared / f"{name}.old"))
        assert moved.returncode != 0 and (shared / name).is_dir() and not (shared / f"{name}.old").exists(), name
        swapped = _as(NODE, "sh", "-c", 'mkdir "$1.new" && mv -T "$1.new" "$1"', "sh", str(shared / name))
        assert swapped.returncode != 0 and _model(shared / name)[0] == 0, (name, swapped.stderr)
        assert _as(NODE, "rm", "-rf", str(shared / name)).returncode != 0 and (shared / name).is_dir()
    # what the node user writes there is still its own to write (its code at the root, a notebook)
    assert _as(NODE, "sh", "-c", 'echo "print(1)" > "$1/train.py" && mv "$1/train.py" "$1/t.py"', "sh",
               str(shared)).returncode == 0
    assert _as(PERSON, "touch", str(shared / "planted.py")).returncode != 0  # and no one else writes there
    assert sharedlayout.ensure(shared) == [] and _model(shared) == (0, 0o1775)  # again: nothing to change


def test_a_shared_dir_whose_group_others_share_is_refused_with_the_fix(shared):
    os.chown(shared, NODE, 0)  # group root: not the node user's alone, so its write cannot go to the group
    problems = sharedlayout.ensure(shared)
    assert any(str(shared) in p and "chgrp" in p for p in problems), problems
    assert _model(shared)[0] == NODE  # left as it was


def test_roots_first_cluster_run_makes_runs_as_the_model_says(shared):
    record = RunRecord(id="demo-1", name="demo", launch=LaunchSpec(program="x.py", hosts=(("node0", 1), ("node1", 1)),
                                                                    node_uid=NODE, launcher="pdsh"))
    run_dir = store.create_run(shared, record)
    assert _model(shared / "runs") == (0, 0o1777)  # before: root's 0755, and no person could launch
    assert _model(run_dir)[0] == NODE
    assert _as(PERSON, "mkdir", str(shared / "runs" / "alice-run")).returncode == 0


def test_what_is_not_roots_or_the_owners_is_refused_never_taken_over(shared, tmp_path):
    (shared / "runs").mkdir()
    os.chown(shared / "runs", PERSON, PERSON)  # someone else's: it may hold their files
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir(mode=0o755)
    (shared / "data").symlink_to(elsewhere)  # the node user points data/ elsewhere
    problems = sharedlayout.ensure(shared)
    assert any("runs" in p and str(PERSON) in p for p in problems), problems
    assert any("data" in p and "symlink" in p for p in problems), problems
    assert _model(shared / "runs") == (PERSON, 0o755)
    assert _model(elsewhere) == (0, 0o755)  # never chmod-ed through the link
    with pytest.raises(Exception, match="ownership model"):
        sharedlayout.make_right(shared)


def test_make_file_for_never_leaves_a_file_of_roots(shared):
    run = shared / "run"
    run.mkdir()
    os.chown(run, NODE, NODE)
    sharedlayout.make_file_for(run / "metrics.jsonl", NODE)
    assert _model(run / "metrics.jsonl") == (NODE, 0o644)
    assert sorted(os.listdir(run)) == ["metrics.jsonl"]  # no temporary left
    (run / "metrics.jsonl").write_text("kept\n")
    sharedlayout.make_file_for(run / "metrics.jsonl", PERSON)  # one there already: untouched
    assert _model(run / "metrics.jsonl")[0] == NODE and (run / "metrics.jsonl").read_text() == "kept\n"


def test_the_supervisors_first_row_leaves_metrics_to_rank0(shared):
    """The README's `dscluster.log(...)` on rank 0 (the node user) while root's supervisor copies DeepSpeed's
    csv rows into the same file: the file is the node user's from its first moment (it was root's while the
    supervisor imported TensorBoard, and rank 0's append died with PermissionError: 'metrics.jsonl')."""
    run = shared / "run"
    (run / "monitor" / "deepspeed").mkdir(parents=True)
    os.chown(run, NODE, NODE)
    (run / "monitor" / "deepspeed" / "Train_Samples_lr.csv").write_text("step,lr\n8,0.1\n16,0.1\n")
    bridge = MonitorBridge(run, 8, owner_uid=NODE)
    seen = []

    class Board:
        def scalars(self, step, values):  # the moment the old code imported TensorBoard, file already made
            seen.append(_model(run / "metrics.jsonl")[0])
            done = _as(NODE, "sh", "-c", 'printf \'{"step":1,"loss":2.0}\\n\' >> "$1"', "sh", str(run / "metrics.jsonl"))
            assert done.returncode == 0, done.stderr

    bridge._tb = Board()
    assert bridge.tick() == 2
    assert seen == [NODE, NODE]
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert sum('"source":"deepspeed"' in line for line in lines) == 2 and sum('"loss"' in line for line in lines) == 2


def test_a_removed_persons_uid_is_not_handed_to_the_next_one(shared):
    spec = parse_spec(f'[cluster]\nname = "lab"\nshared_dir = "{shared}"\n\n[[nodes]]\naddress = "10.0.0.1"\nslots = 1\n')
    free = accounts.choose_uid(spec, None, "carol")  # what the next person would get
    assert sharedlayout.ensure(shared) == []
    kept = shared / "users" / "alice"  # `user remove alice` kept her directory (and her runs, checkpoints)
    kept.mkdir()
    os.chown(kept, free, free)
    assert accounts.choose_uid(spec, None, "carol") != free  # before: carol got alice's uid, and her files
    with pytest.raises(ConfigError, match=f"uid {free} still owns {kept}"):
        accounts.choose_uid(spec, free, "carol")
    assert accounts.choose_uid(spec, None, "alice") == free  # alice added again owns her files again

"""A run record someone else rewrote is never acted on (runs/records/verify.py), made for real as root with other uids:
the node user, who owns the directories of root's cluster runs, rewrites root's record (owner, program) or moves
another run's record in; a person writes a record naming another person as its owner; a record's supervisor
pid points at someone else's process. `restart` and `stop` (root's, or the named owner's) refuse, naming who
wrote it; nothing is signalled but the record writer's own supervisor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dscluster.errors import NotOwner
from dscluster.runs import service
from dscluster.runs.records import owner, store, verify
from dscluster.runs.records.record import LaunchSpec, RunRecord
from dscluster.runs.supervising import control

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to write as other users")
NODE, ALICE, BOB = 54331, 54332, 54333  # uids with no account: their names are their numbers


def _as(uid: int, *argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=60, check=False, **kw)


@pytest.fixture
def shared():
    path = Path(tempfile.mkdtemp(prefix="dsc-records-", dir="/var/tmp"))
    path.chmod(0o755)
    (path / "runs").mkdir(mode=0o755)
    (path / "runs").chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run(shared: Path, run_id: str, dir_uid: int, writer: int, **fields) -> Path:
    """A run directory of `dir_uid` holding a run.json written by `writer` (its file's owner)."""
    record = RunRecord(id=run_id, name="r", launch=LaunchSpec(program="train.py", cwd="/tmp"), status="running",
                       **fields)
    run_dir = shared / "runs" / run_id
    run_dir.mkdir(mode=0o755)
    os.chown(run_dir, dir_uid, dir_uid)
    store.write_record(run_dir, record)
    os.chown(run_dir / "run.json", writer, writer)
    return run_dir


def _rewrite(uid: int, run_dir: Path, **changes) -> None:
    """As `uid`: a new run.json with `changes`, renamed over the old one (as anyone who can write the dir can)."""
    data = {**json.loads((run_dir / "run.json").read_text()), **changes}
    tmp = run_dir / ".planted"
    done = _as(uid, "sh", "-c", 'cat > "$1" && mv -f "$1" "$2"', "sh", str(tmp), str(run_dir / "run.json"),
               input=json.dumps(data))
    assert done.returncode == 0, done.stderr


def test_roots_record_rewritten_by_the_node_user_is_not_restarted(shared):
    run_dir = _run(shared, "demo-1", NODE, 0, owner="root")
    assert verify.record_to_act_on(run_dir).writer == 0  # as root's supervisor wrote it: acted on
    _rewrite(NODE, run_dir, owner=str(ALICE), launch={**store.read_json(run_dir)["launch"], "program": "evil.py"})
    with pytest.raises(NotOwner, match=f"written by {NODE}, yet names {ALICE}"):
        service.restart_request(run_dir)
    _rewrite(NODE, run_dir, owner="root")  # claiming root's own name changes nothing: the file is the node user's
    with pytest.raises(NotOwner, match=f"written by {NODE}"):
        service.restart_request(run_dir)


def test_a_record_moved_in_from_another_run_is_not_that_run(shared):
    _run(shared, "demo-1", NODE, 0, owner="root")
    other = _run(shared, "demo-2", NODE, 0, owner="root")
    done = _as(NODE, "mv", "-f", str(shared / "runs" / "demo-1" / "run.json"), str(other / "run.json"))
    assert done.returncode == 0, done.stderr  # root's file, moved by the owner of both directories
    with pytest.raises(NotOwner, match="names run demo-1, not demo-2"):
        service.restart_request(other)


def test_a_person_cannot_make_a_record_of_theirs_look_like_anothers(shared, monkeypatch):
    run_dir = _run(shared, "bob-1", BOB, BOB, owner=str(BOB))
    _rewrite(BOB, run_dir, owner=str(ALICE), launch={**store.read_json(run_dir)["launch"], "program": "evil.py"})
    # alice, the named owner, restarts "her" run: it would run bob's program as her
    monkeypatch.setattr(owner, "current_user", lambda: str(ALICE))
    monkeypatch.setattr(owner, "is_admin", lambda: False)
    with pytest.raises(NotOwner, match=f"written by {BOB}, yet names {ALICE}"):
        service.restart_request(run_dir)
    with pytest.raises(NotOwner, match=f"written by {BOB}"):
        service.stop(run_dir)


def test_stop_signals_only_the_writers_own_supervisor(shared):
    run_id = "alice-1"
    decoy = subprocess.Popen(["setpriv", f"--reuid={BOB}", f"--regid={BOB}", "--clear-groups", sys.executable, "-c",
                              "import time; time.sleep(120)", "dscluster.runs.supervising.supervisor", run_id])
    try:
        deadline = time.monotonic() + 30
        while verify.process_uid(decoy.pid) != BOB and time.monotonic() < deadline:
            time.sleep(0.05)
        # alice's own record points at bob's process (its command line even names her run)
        run_dir = _run(shared, run_id, ALICE, ALICE, owner=str(ALICE), supervisor_pid=decoy.pid)
        checked = verify.record_to_act_on(run_dir)
        assert not verify.may_signal(checked)
        control.request_stop(run_dir, checked)  # root's stop
        time.sleep(0.5)
        assert decoy.poll() is None  # bob's process lives
        assert (run_dir / "stop").is_file()  # the run itself is asked to stop
    finally:
        decoy.kill()
        decoy.wait()


def test_links_and_writable_records_are_refused(shared):
    run_dir = _run(shared, "demo-3", NODE, 0, owner="root")
    os.chmod(run_dir / "run.json", 0o666)
    with pytest.raises(NotOwner, match="only its writer can change"):
        verify.record_to_act_on(run_dir)
    os.chmod(run_dir / "run.json", 0o644)
    os.rename(run_dir / "run.json", shared / "kept.json")
    os.symlink(shared / "kept.json", run_dir / "run.json")
    with pytest.raises(NotOwner, match="link"):
        verify.record_to_act_on(run_dir)

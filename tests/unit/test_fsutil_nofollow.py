"""fsutil's no-symlink rule: state files in a directory another user can change are never reached
through a symlink, hard link or special file planted there; in our own directories symlinks work.

"Another user's directory" is made for real: as root, by chowning a directory to an unused uid (the
rule looks at owners and modes); without root, by a group/world-writable directory.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from dscluster import fsutil
from dscluster.errors import RunError
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord
from dscluster.train.checkpoint import read_commit

OTHER_UID = 54321


def foreign_dir(path: Path) -> Path:
    """A directory another user can change: owned by another uid (root), else world-writable."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, OTHER_UID, OTHER_UID)
        os.chmod(path, 0o755)
    else:
        os.chmod(path, 0o777)
    return path


@pytest.fixture
def victim(tmp_path):
    """A file only we may write, in a directory only we may write, with known content."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    v = private / "victim.json"
    v.write_text('{"secret": "only-mine", "step": 999}\n')
    v.chmod(0o600)
    return v


def unchanged(victim: Path) -> bool:
    return victim.read_text() == '{"secret": "only-mine", "step": 999}\n'


def test_own_directories_follow_symlinks(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    fsutil.atomic_write_text(tmp_path / "link" / "a.txt", "hello")
    assert (real / "a.txt").read_text() == "hello"
    (real / "f").symlink_to("a.txt")
    assert fsutil.read_bytes(tmp_path / "link" / "f") == b"hello"
    fsutil.append_jsonl(tmp_path / "link" / "e.jsonl", {"a": 1})
    assert fsutil.read_jsonl(real / "e.jsonl") == ([{"a": 1}], 8)


def test_symlinked_file_in_foreign_dir_is_not_written_through(tmp_path, victim):
    logs = foreign_dir(tmp_path / "run" / "logs")
    (logs / "launcher.log").symlink_to(victim)
    with pytest.raises(fsutil.UnsafePath) as err:
        fsutil.open_file(logs / "launcher.log", os.O_WRONLY | os.O_APPEND)
    assert err.value.errno == errno.ELOOP
    with pytest.raises(fsutil.UnsafePath):
        fsutil.read_bytes(logs / "launcher.log")
    # A writer of its own log replaces the planted entry (never the target) and carries on.
    with fsutil.open_append(logs / "launcher.log") as f:
        f.write(b"attempt 1\n")
    assert unchanged(victim)
    assert not (logs / "launcher.log").is_symlink() and (logs / "launcher.log").read_bytes() == b"attempt 1\n"


def test_writers_opening_one_planted_log_at_once_all_carry_on_in_one_fresh_file(tmp_path, victim):
    # Seen in CI: a run's watchdog channels start from 8 threads and each opens logs/watchdog.log; with a symlink
    # planted there, one thread's fresh file made another's O_EXCL fail ("File exists") and the supervisor crashed.
    import threading

    logs = foreign_dir(tmp_path / "run") / "logs"
    logs.mkdir()
    for _ in range(20):
        (logs / "watchdog.log").unlink(missing_ok=True)
        (logs / "watchdog.log").symlink_to(victim)
        start, errors, files = threading.Barrier(8), [], []

        def open_it(i, start=start, files=files, errors=errors):
            start.wait()
            try:
                f = fsutil.open_append(logs / "watchdog.log")
                f.write(b"channel %d\n" % i)
                files.append(f)
            except Exception as err:  # noqa: BLE001 - collected, asserted below
                errors.append(err)

        threads = [threading.Thread(target=open_it, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for f in files:
            f.close()
        assert not errors and unchanged(victim), errors
        assert not (logs / "watchdog.log").is_symlink()
        assert sorted((logs / "watchdog.log").read_bytes().splitlines()) == sorted(b"channel %d" % i for i in range(8))


def test_symlinked_directory_in_foreign_dir_is_refused(tmp_path, victim):
    run = foreign_dir(tmp_path / "run")
    (run / "logs").symlink_to(victim.parent)
    for attempt in (lambda: fsutil.open_append(run / "logs" / "victim.json"),
                    lambda: fsutil.atomic_write_text(run / "logs" / "victim.json", "x"),
                    lambda: fsutil.append_jsonl(run / "logs" / "victim.json", {"x": 1}),
                    lambda: fsutil.make_dir(run / "logs" / "new")):
        with pytest.raises(fsutil.UnsafePath):
            attempt()
    assert unchanged(victim) and sorted(p.name for p in victim.parent.iterdir()) == ["victim.json"]


def test_atomic_write_replaces_a_planted_symlink_and_chowns_by_descriptor(tmp_path, victim):
    run = foreign_dir(tmp_path / "run")
    (run / "run.json").symlink_to(victim)
    store.write_record(run, RunRecord.from_json({"id": "r1", "status": "running"}))
    assert unchanged(victim) and not (run / "run.json").is_symlink()
    assert store.read_record(run).status == "running"
    if os.geteuid() == 0:
        fsutil.atomic_write_text(run / "node_env.sh", "export K=v\n", 0o600, owner=OTHER_UID)
        st = (run / "node_env.sh").stat()
        assert st.st_uid == OTHER_UID and st.st_mode & 0o777 == 0o600
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]


def test_events_and_records_are_read_without_following(tmp_path, victim):
    run = foreign_dir(tmp_path / "run")
    (run / "events.jsonl").symlink_to(victim)
    (run / "run.json").symlink_to(victim)
    assert store.read_events(run) == []  # nothing read through the symlink
    with pytest.raises(RunError, match="damaged"):
        store.read_record(run)
    store.append_event(run, "teardown", unreachable=["node1"])
    assert unchanged(victim) and [e["event"] for e in store.read_events(run)] == ["teardown"]


def test_commit_json_symlink_is_not_read(tmp_path, victim):
    step = tmp_path / "checkpoints" / "step-999"
    foreign_dir(tmp_path / "checkpoints")
    foreign_dir(step)
    (step / "COMMIT.json").symlink_to(victim)
    assert read_commit(step) is None
    os.unlink(step / "COMMIT.json")
    (step / "COMMIT.json").write_text(json.dumps({"step": 999}))
    assert read_commit(step) == {"step": 999}


@pytest.mark.skipif(os.geteuid() != 0, reason="hard links to another user's file need root to set up here")
def test_hard_link_and_fifo_in_foreign_dir_are_refused(tmp_path, victim):
    logs = foreign_dir(tmp_path / "logs")
    os.link(victim, logs / "watchdog.log")
    with pytest.raises(fsutil.UnsafePath) as err:
        fsutil.open_file(logs / "watchdog.log", os.O_WRONLY | os.O_APPEND)
    assert err.value.errno == errno.EMLINK
    os.mkfifo(logs / "fifo.log")
    with pytest.raises(fsutil.UnsafePath):  # would block a writer until someone reads
        fsutil.read_bytes(logs / "fifo.log")
    assert unchanged(victim)


def test_open_beneath_never_leaves_the_base(tmp_path, victim):
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "logs" / "ok.log").write_text("fine")
    (run / "logs" / "sub").symlink_to(victim.parent)
    os.close(fsutil.open_beneath(run, "logs/ok.log"))
    for rel in ("logs/sub/victim.json", "../private/victim.json", "/etc/passwd"):
        with pytest.raises(fsutil.UnsafePath):
            fsutil.open_beneath(run, rel)
    # Strict even in our own directory: an HTTP reader serves nothing from outside the run.
    (run / "logs2").symlink_to(run / "logs")
    with pytest.raises(fsutil.UnsafePath):
        fsutil.open_beneath(run, "logs2/ok.log")


def test_sticky_tmp_entries_of_our_own_are_followed(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    (sticky / "mine").mkdir()
    (sticky / "link").symlink_to(sticky / "mine")
    fsutil.atomic_write_text(sticky / "link" / "x", "ok")
    assert (sticky / "mine" / "x").read_text() == "ok"

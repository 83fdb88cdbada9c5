"""GPU leases: the pure rules (which GPUs a run uses, overlap, staleness, FIFO order, reclaim), the claim files
under their lock, the refusal/queue at launch, and run owners (who may stop or restart)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from dscluster.errors import ExitCode, GpusBusy, NotOwner
from dscluster.runs.leases import files as leasefiles
from dscluster.runs.leases import leasing
from dscluster.runs.leases.rules import (
    HELD,
    WAITING,
    Claim,
    Gpu,
    Holder,
    blockers,
    gpus_of,
    is_stale,
    live,
    overlap,
    queue,
    take,
)
from dscluster.runs.records.record import LaunchSpec, RunRecord

HERE = Holder("ctl", 100, "5")


def claim(run_id, gpus, *, state=HELD, queued=0.0, heartbeat=1000.0, holder=HERE, owner="ann"):
    return Claim(run_id, owner, tuple(Gpu(n, i) for n, i in gpus), holder, state=state, queued=queued,
                 since=None if state == WAITING else queued, heartbeat=heartbeat)


def test_gpus_of_hosts_slots_include_and_local():
    assert gpus_of([("node0", 2), ("node1", 1)], None, here="ctl") == (Gpu("node0", 0), Gpu("node0", 1),
                                                                       Gpu("node1", 0))
    assert gpus_of([("node0", 2), ("node1", 2)], "node0:1@node1:0,1", here="ctl") == (
        Gpu("node0", 1), Gpu("node1", 0), Gpu("node1", 1))
    assert gpus_of([], None, here="ctl", local_procs=2) == (Gpu("ctl", 0), Gpu("ctl", 1))
    assert gpus_of([], "localhost:2,3", here="ctl", local_procs=2) == (Gpu("ctl", 2), Gpu("ctl", 3))


def test_overlap_and_blockers_held_and_earlier_waiters():
    a = claim("a", [("node0", 0), ("node0", 1)])
    w1 = claim("w1", [("node0", 1)], state=WAITING, queued=10.0)
    w2 = claim("w2", [("node1", 0)], state=WAITING, queued=11.0)
    assert overlap(a.gpus, w1.gpus) == (Gpu("node0", 1),)
    want = (Gpu("node0", 1),)
    # a launch that does not wait: held and queued claims on its GPUs are both in its way
    assert {c.run_id for c in blockers([a, w1, w2], "new", want)} == {"a", "w1"}
    # a waiting run: only held claims and those queued before it
    assert {c.run_id for c in blockers([a, w1, w2], "w1", want, queued=10.0)} == {"a"}
    assert {c.run_id for c in blockers([w1], "late", want, queued=20.0)} == {"w1"}
    assert blockers([w1], "early", want, queued=5.0) == ()
    assert blockers([a], "a", a.gpus) == ()  # its own claim never blocks it


def test_fifo_order_is_by_queue_time_then_run_id():
    claims = [claim("c", [("n", 0)], state=WAITING, queued=3.0), claim("b", [("n", 0)], state=WAITING, queued=1.0),
              claim("a", [("n", 0)], state=WAITING, queued=3.0), claim("h", [("n", 1)])]
    assert [c.run_id for c in queue(claims)] == ["b", "a", "c"]


def test_stale_claims_are_reclaimed():
    fresh = claim("fresh", [("n", 0)], heartbeat=990.0)
    old = claim("old", [("n", 1)], heartbeat=500.0)
    dead = claim("dead", [("n", 2)], heartbeat=999.0, holder=Holder("ctl", 7, "9"))

    def alive(h):
        return h.pid != 7 if h.host == "ctl" else None

    assert not is_stale(fresh, 1000.0, alive, timeout=120)
    assert is_stale(old, 1000.0, lambda h: None, timeout=120)  # another host: only the heartbeat tells
    assert not is_stale(old, 1000.0, lambda h: True, timeout=1e9)
    assert is_stale(dead, 1000.0, alive, timeout=120)  # its supervisor's pid is gone on its own host
    assert [c.run_id for c in live([fresh, old, dead], 1000.0, alive, timeout=120)] == ["fresh"]


def test_take_keeps_the_queue_time_and_sets_since():
    w = claim("w", [("n", 0)], state=WAITING, queued=5.0)
    held = take(w, 50.0, Holder("ctl", 3, "1"))
    assert (held.state, held.queued, held.since, held.holder.pid, held.heartbeat) == (HELD, 5.0, 50.0, 3, 50.0)
    assert Claim.from_json(json.loads(json.dumps(held.to_json()))) == held


def test_holder_alive_pid_and_start_time():
    me = leasefiles.this_holder()
    assert leasefiles.holder_alive(me) is True
    assert leasefiles.holder_alive(Holder(me.host, me.pid, "not-its-start")) is False  # a reused pid
    assert leasefiles.holder_alive(Holder("some-other-host", me.pid, None)) is None


def test_board_files_lock_and_forged_owner(tmp_path):
    d = tmp_path / "leases"
    with leasefiles.LeaseBoard(d) as board:
        board.write(claim("r1", [("n", 0)], owner="someone-else", holder=leasefiles.this_holder()))
        assert board.get("r1") is not None
    assert os.stat(d).st_mode & 0o7777 == 0o1777  # sticky and world-writable: every user launches here
    (d / "evil.json").symlink_to(d / "r1.json")  # a symlink is never read as a claim
    (d / "wrong.json").write_text(json.dumps(claim("other", [("n", 1)]).to_json()))  # name and run disagree
    os.mkfifo(d / "fifo.json")  # read without blocking, and ignored
    got = leasefiles.read_claims(d)
    assert [c.run_id for c in got] == ["r1"]
    me = leasefiles.user_name(os.geteuid())
    assert got[0].owner == (me if os.geteuid() != 0 else "someone-else")  # a claim speaks for its file's owner
    with leasefiles.LeaseBoard(d) as board:
        assert board.remove("r1")
    assert leasefiles.read_claims(d) == ()


def _record(run_id, hosts=(("node0", 2),), owner="ann", launcher="pdsh"):
    return RunRecord(id=run_id, launch=LaunchSpec(program="t.py", hosts=tuple(hosts), launcher=launcher), owner=owner)


def test_launch_is_refused_or_queued_and_released(tmp_path):
    first = _record("first-1")
    taken = leasing.claim_at_launch(first, tmp_path, wait=False)
    assert taken.state == HELD
    # until its supervisor takes it over, the heartbeat alone judges it (the launching process may exit first)
    assert leasefiles.holder_alive(taken.holder) is None
    second = _record("second-2", hosts=(("node0", 1),), owner="bob")
    with pytest.raises(GpusBusy) as err:
        leasing.claim_at_launch(second, tmp_path, wait=False)
    assert err.value.exit_code == ExitCode.GPUS_BUSY
    assert "first-1" in err.value.message and "ann" in err.value.message and "node0:0" in err.value.message
    assert "--wait" in err.value.hint
    queued = leasing.claim_at_launch(second, tmp_path, wait=True)
    assert queued.state == WAITING
    shown = leasing.board([leasefiles.cluster_dir(tmp_path)])
    assert [c.run_id for c in shown.held] == ["first-1"]
    assert [(w.position, w.claim.run_id, [b.run_id for b in w.behind]) for w in shown.queue] == \
        [(1, "second-2", ["first-1"])]
    # other GPUs are free: node1 is not taken
    assert leasing.claim_at_launch(_record("third-3", hosts=(("node1", 1),)), tmp_path, wait=False).state == HELD
    leasing.release(first, tmp_path)
    assert [c.run_id for c in leasing.board([leasefiles.cluster_dir(tmp_path)]).held] == ["third-3"]


def test_a_queued_supervisor_waits_its_turn_then_holds(tmp_path):
    first = _record("first-1")
    leasing.claim_at_launch(first, tmp_path, wait=False)
    second = _record("second-2").replace(status=leasing.QUEUED)
    leasing.claim_at_launch(second, tmp_path, wait=True)
    saved, events = [], []
    sup = leasing.SupervisorLeases(second, tmp_path, lambda name, **kw: events.append(name))
    polls = iter(range(100))

    def stop_wanted():
        if next(polls) == 2:
            leasing.release(first, tmp_path)  # the first run ends while the second waits
        return False

    assert sup.acquire(stop_wanted, lambda **kw: saved.append(kw), poll=0.01)
    assert events[0] == "queued" and events[-1] == "gpus-held" and saved == [{"status": "pending"}]
    held = leasing.board([leasefiles.cluster_dir(tmp_path)]).held
    assert [(c.run_id, c.holder.pid) for c in held] == [("second-2", os.getpid())]
    sup.release()
    assert leasing.board([leasefiles.cluster_dir(tmp_path)]).held == ()


def test_a_stop_ends_the_wait(tmp_path):
    leasing.claim_at_launch(_record("first-1"), tmp_path, wait=False)
    second = _record("second-2").replace(status=leasing.QUEUED)
    leasing.claim_at_launch(second, tmp_path, wait=True)
    sup = leasing.SupervisorLeases(second, tmp_path)
    assert not sup.acquire(lambda: True, lambda **kw: None, poll=0.01)
    sup.release()
    assert [c.run_id for c in leasing.board([leasefiles.cluster_dir(tmp_path)]).held] == ["first-1"]
    assert leasing.board([leasefiles.cluster_dir(tmp_path)]).queue == ()


def test_a_dead_supervisors_claim_is_reclaimed(tmp_path):
    d = leasefiles.cluster_dir(tmp_path)
    with leasefiles.LeaseBoard(d) as board:  # a supervisor that is gone: a pid no process has
        board.write(claim("gone-1", [("node0", 0)], holder=Holder(socket.gethostname(), 2 ** 22 + 7, "1"),
                          heartbeat=time.time()))
    assert leasing.claim_at_launch(_record("next-2"), tmp_path, wait=False).state == HELD


def test_slurm_runs_take_no_leases(tmp_path):
    assert leasing.claim_at_launch(_record("s-1", launcher="slurm"), tmp_path, wait=False) is None
    assert leasing.claim_at_launch(_record("s-2", launcher="slurm"), tmp_path, wait=False) is None


def test_share_gpus_takes_no_leases_and_is_never_refused(tmp_path):
    leasing.claim_at_launch(_record("holder-1"), tmp_path, wait=False)
    shared = RunRecord(id="shared-2", launch=LaunchSpec(program="t.py", hosts=(("node0", 2),), launcher="pdsh",
                                                        share_gpus=True))
    assert leasing.claim_at_launch(shared, tmp_path, wait=False) is None
    assert RunRecord.from_json(shared.to_json()).launch.share_gpus is True


def test_local_runs_take_leases_only_with_gpus(tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path / "home"))
    local = _record("l-1", hosts=(), launcher="local")
    monkeypatch.setattr(leasing, "has_local_gpus", lambda: False)
    assert leasing.claim_at_launch(local, tmp_path, wait=False) is None
    monkeypatch.setattr(leasing, "has_local_gpus", lambda: True)
    got = leasing.claim_at_launch(local, tmp_path, wait=False)
    assert got.gpus == (Gpu(socket.gethostname(), 0),)
    assert (tmp_path / "home" / "leases" / "l-1.json").is_file()


# ---- owners --------------------------------------------------------------------------------------
def test_owner_is_recorded_and_read_back_and_old_records_use_the_file_owner(tmp_path):
    from dscluster.runs.records import owner

    rec = _record("r-1", owner="ann")
    assert RunRecord.from_json(rec.to_json()).owner == "ann"
    old = RunRecord.from_json({k: v for k, v in rec.to_json().items() if k != "owner"})
    assert "owner" not in old.to_json()  # a key nobody set is not invented
    (tmp_path / "run.json").write_text("{}")
    assert owner.owner_of(old, tmp_path) == owner.user_name(os.geteuid())


def test_only_the_owner_or_root_may_stop(monkeypatch):
    from dscluster.runs.records import owner

    rec = _record("r-1", owner="ann")
    monkeypatch.setattr(owner, "current_user", lambda: "bob")
    monkeypatch.setattr(owner, "is_admin", lambda: False)
    with pytest.raises(NotOwner) as err:
        owner.check_may_control(rec, None, "stop")
    assert err.value.exit_code == ExitCode.NOT_OWNER and err.value.http_status == 403
    assert "ann" in err.value.message and "bob" in err.value.message
    monkeypatch.setattr(owner, "is_admin", lambda: True)
    owner.check_may_control(rec, None, "stop")  # root may
    monkeypatch.setattr(owner, "is_admin", lambda: False)
    monkeypatch.setattr(owner, "current_user", lambda: "ann")
    owner.check_may_control(rec, None, "restart")  # its owner may


def test_root_is_told_to_restart_a_persons_run_as_that_person(monkeypatch):
    import dataclasses

    from dscluster.cluster.specmodel import ClusterSpec, NodeSpec
    from dscluster.runs.records import owner

    spec = ClusterSpec(name="lab", nodes=(NodeSpec(address="10.0.0.1", slots=1, name="node0"),),
                       shared_dir=Path("/shared"), ssh_user="ann")
    rec = _record("r-1", owner="ann")
    theirs = dataclasses.replace(rec, launch=dataclasses.replace(rec.launch, cluster_spec=spec))
    monkeypatch.setattr(owner, "is_admin", lambda: True)
    with pytest.raises(NotOwner) as err:  # their ranks reach the nodes with their own key, not root's
        owner.check_restart_identity(theirs)
    assert "runuser -u ann -- dscluster restart r-1" in err.value.hint
    node_users = dataclasses.replace(theirs, owner="root", launch=dataclasses.replace(
        theirs.launch, cluster_spec=dataclasses.replace(spec, ssh_user="dscluster")))
    owner.check_restart_identity(node_users)  # root's own run (as the node user): root restarts it
    owner.check_restart_identity(rec)  # no recorded spec (a local run)
    monkeypatch.setattr(owner, "is_admin", lambda: False)
    owner.check_restart_identity(theirs)  # ann herself


def test_refusal_reads_in_zh_tw(monkeypatch):
    from dscluster.i18n import catalog
    from dscluster.runs.records import owner

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    monkeypatch.setattr(owner, "current_user", lambda: "bob")
    monkeypatch.setattr(owner, "is_admin", lambda: False)
    try:
        with pytest.raises(NotOwner) as err:
            owner.check_may_control(_record("r-1", owner="ann"), Path("/nonexistent"), "stop")
        assert "屬於 ann" in err.value.message
    finally:
        catalog.cache_clear()


def test_the_panel_and_api_pass_wait_on():
    from dscluster.errors import UsageError
    from dscluster.jupyter.launching import parse_launch

    assert parse_launch({"script": "-m dscluster.train", "wait": True}, cwd="/").gpus.wait is True
    assert parse_launch({"script": "-m dscluster.train"}, cwd="/").gpus.wait is False
    with pytest.raises(UsageError, match="wait"):
        parse_launch({"script": "-m dscluster.train", "wait": "yes"}, cwd="/")

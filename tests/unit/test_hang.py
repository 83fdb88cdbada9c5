"""A collective hung with every rank alive (issue #46): the ranks' own record of their collectives
(launcher/progress.py), what a node's watchdog makes of it (runs/supervising/rankprogress.py), the rules that call it a
hang and never a slow healthy step (runs/supervising/hang.py), and how the plan puts the record in every rank."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

from dscluster.launcher import backends, plan, progress
from dscluster.runs.supervising import hang, rankprogress
from dscluster.runs.supervising.hang import RankState, hung_collective
from dscluster.runs.supervising.verdict import Failure, explain_failure


def waiting(rank, secs, op="all_reduce", seq=7, group="0", world=True, node=None):
    return RankState(rank, node or f"node{rank}", 7, seq, op, group, secs, 0.0, world)


def idle(rank, secs, **kw):
    return RankState(rank, f"node{rank}", 6, 6, "all_reduce", "0", None, secs, **kw)


def test_peers_waiting_on_a_rank_that_does_nothing_is_a_hang_naming_that_rank():
    failure = hung_collective([waiting(0, 2.5), idle(1, 2.4), waiting(2, 2.2)], 3)
    assert (failure.kind, failure.node, failure.rank) == ("hung-collective", "node1", 1)
    assert "rank 1 did nothing for 2.4s" in failure.detail and "waited 2.5s in all_reduce (#7" in failure.detail


def test_a_slow_healthy_step_is_never_a_hang():
    # Rank 0 writes a checkpoint (CPU, I/O: never idle) while the others wait in a barrier.
    assert hung_collective([idle(0, 0.0), waiting(1, 30.0, "barrier"), waiting(2, 30.0, "barrier")], 3) is None
    # A long first step: nobody in a collective yet, however idle.
    assert hung_collective([idle(0, 9.0), idle(1, 9.0)], 2) is None
    # Every rank in the same collective: a big transfer, not a hang.
    assert hung_collective([waiting(0, 60.0), waiting(1, 60.0)], 2) is None
    # The quiet has not lasted yet: a rank just entered its collective, or the idle one just stopped working.
    assert hung_collective([waiting(0, 0.5), idle(1, 5.0), waiting(2, 5.0)], 3) is None
    assert hung_collective([waiting(0, 5.0), idle(1, 1.0)], 2) is None


def test_no_hang_is_called_on_partial_or_opaque_evidence():
    # A rank without a record (no torch.distributed yet, opted out): the quiet of the whole run is unknown.
    assert hung_collective([waiting(0, 9.0), idle(1, 9.0)], 3) is None
    # A rank that used asynchronous collectives or point-to-point ops may sit in an unrecorded wait().
    assert hung_collective([waiting(0, 9.0), idle(1, 9.0, async_ops=True)], 2) is None
    assert hung_collective([waiting(0, 9.0), idle(1, 9.0, p2p=True)], 2) is None
    # Peers in a collective of a subgroup only: the idle rank need not be in it.
    assert hung_collective([waiting(0, 9.0, world=False), idle(1, 9.0)], 2) is None
    # A stale report (its node's heartbeats late: runs/detect.py's rules judge the node).
    stale = RankState(1, "node1", 6, 6, "all_reduce", "0", None, 9.0, age=3.0)
    assert hung_collective([waiting(0, 9.0), stale], 2) is None


def test_mismatched_collectives_are_certain_even_with_busy_peers():
    ranks = [waiting(0, 1.5, "all_reduce"), waiting(1, 1.5, "broadcast"), idle(2, 0.0)]
    failure = hung_collective(ranks, 4)  # rank 3 unknown: this rule needs no quiet run
    assert failure.kind == "hung-collective" and "rank 0 waits in all_reduce and rank 1 in broadcast" in failure.detail
    # A moment's view (under MISMATCH_AFTER), another group's slot, or another sequence number: not certain.
    assert hung_collective([waiting(0, 0.2, "all_reduce"), waiting(1, 1.5, "broadcast"), idle(2, 0.0)], 3) is None
    assert hung_collective([waiting(0, 2.0, group="0"), waiting(1, 2.0, "broadcast", group="1")], 2) is None
    assert hung_collective([waiting(0, 2.0, seq=7), waiting(1, 2.0, "broadcast", seq=8)], 2) is None


def test_a_heartbeat_s_progress_word_parses_back():
    ranks = hang.parse("0:12:5:2.50:0.00:w:all_reduce:0,1:11:4:-:3.25:wa:barrier:0,junk,2:x", "node1", 0.2)
    assert [(r.rank, r.total, r.seq, r.waiting, r.idle, r.world, r.async_ops, r.op, r.node, r.age) for r in ranks] == [
        (0, 12, 5, 2.5, 0.0, True, False, "all_reduce", "node1", 0.2),
        (1, 11, 4, None, 3.25, True, True, "barrier", "node1", 0.2)]
    chans = [types.SimpleNamespace(prog="0:9:9:3.00:0.00:w:barrier:0", node="a", prog_age=lambda: 0.1),
             types.SimpleNamespace(prog="1:8:8:-:3.00:w:barrier:0", node="b", prog_age=lambda: 0.1)]
    assert hang.failure(chans, 2).node == "b"


def fake_c10d():
    """A stand-in for torch.distributed.distributed_c10d: the recorder wraps functions by name and signature."""
    seen = {}
    mod = types.ModuleType("fake_c10d")

    def all_reduce(tensor, op=None, group=None, async_op=False):
        seen["inside"] = progress.read_record(seen["path"])
        return "done"

    def all_gather_object(obj_list, obj, group=None):
        return mod.all_reduce(obj)  # a collective built from another: recorded once

    def _all_gather_base(out, inp, group=None, async_op=False):
        return None

    def isend(tensor, dst, group=None, tag=0):
        return None

    mod.all_reduce, mod.all_gather_object, mod._all_gather_base, mod.isend = all_reduce, all_gather_object, \
        _all_gather_base, isend
    dist = types.SimpleNamespace(get_world_size=lambda group=None: 4 if group in (None, "world4") else 2,
                                 distributed_c10d=types.SimpleNamespace(_get_default_group=lambda: None))
    return mod, dist, seen


def test_the_rank_s_record_follows_each_outermost_collective(tmp_path):
    mod, dist, seen = fake_c10d()
    seen["path"] = str(tmp_path / "rec")
    recorder = progress._Recorder(seen["path"])
    assert progress.patch(mod, recorder, dist) == 4 and progress.patch(mod, recorder, dist) == 0
    assert mod.all_reduce(1) == "done"
    inside, after = seen["inside"], progress.read_record(seen["path"])
    assert (inside.inside, inside.op, inside.total, inside.seq, inside.world, inside.pid) == (
        True, "all_reduce", 1, 1, True, os.getpid())
    assert (after.inside, after.total) == (False, 1) and after.since >= inside.since
    mod.all_gather_object([], 1, group="world4")
    rec = progress.read_record(seen["path"])
    assert (rec.op, rec.total) == ("all_gather_object", 2)
    mod._all_gather_base(None, None, "pair", True)  # positional group and async_op; the alias's real name
    rec = progress.read_record(seen["path"])
    assert (rec.op, rec.world, rec.async_ops, rec.p2p) == ("all_gather_into_tensor", False, True, False)
    mod.isend(None, 1)
    rec = progress.read_record(seen["path"])
    assert rec.p2p and rec.total == 3  # marked, not counted
    assert not Path(str(tmp_path / "nothing")).exists() and progress.read_record(str(tmp_path / "nothing")) is None


def test_only_a_rank_of_a_run_that_wants_it_records():
    base = {"DSCLUSTER_RUN_ID": "r1", "RANK": "0", progress.ENV: "1"}
    assert not progress.install({**base, progress.ENV: "0"})
    assert not progress.install({k: v for k, v in base.items() if k != "RANK"})
    assert not progress.install({**base, "DSCLUSTER_RUN_ID": "../x"})


def test_the_rank_hook_installs_and_still_runs_the_sitecustomize_it_shadows(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import builtins\nbuiltins.SHADOWED = True\n")
    code = ("import sys, builtins; from dscluster.launcher import progress; "
            "print(getattr(builtins, 'SHADOWED', False), any(isinstance(f, progress._Finder) for f in sys.meta_path))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([plan.RANK_HOOK, str(tmp_path)]), "RANK": "1",
           "DSCLUSTER_RUN_ID": "r1", "DSCLUSTER_ATTEMPT": "2", progress.ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "True"], out.stderr
    out = subprocess.run([sys.executable, "-c", code], env={**env, progress.ENV: "0"}, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.split() == ["True", "False"], out.stderr


def test_the_rank_hook_gives_torchruns_local_world_size_where_the_launcher_set_only_local_size(tmp_path):
    """DeepSpeed's launch.py (every node of a pdsh/ssh run) sets LOCAL_SIZE; a torchrun-written script reads
    LOCAL_WORLD_SIZE. The hook adds that alias and nothing of an elastic agent's; a value already set is kept."""
    code = "import os; print(os.environ.get('LOCAL_WORLD_SIZE'), os.environ.get('GROUP_RANK'))"
    env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_WORLD_SIZE", "GROUP_RANK")}
    env.update(PYTHONPATH=plan.RANK_HOOK, RANK="3", LOCAL_SIZE="4", **{progress.ENV: "0"})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["4", "None"], out.stderr
    out = subprocess.run([sys.executable, "-c", code], env={**env, "LOCAL_WORLD_SIZE": "2"}, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.split() == ["2", "None"], out.stderr
    out = subprocess.run([sys.executable, "-c", code], env={k: v for k, v in env.items() if k != "RANK"},
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["None", "None"], out.stderr  # not a rank: nothing is added


def test_the_plan_puts_the_hook_first_on_every_rank_s_path_unless_opted_out():
    env = plan.progress_env({"PYTHONPATH": "/mine"}, {"PYTHONPATH": "/launching"})
    assert env == {progress.ENV: "1", "PYTHONPATH": os.pathsep.join([plan.RANK_HOOK, "/mine"])}
    assert plan.progress_env({}, {"PYTHONPATH": "/launching"})["PYTHONPATH"].endswith(os.pathsep + "/launching")
    assert plan.progress_env({progress.ENV: "0"}, {}) == {progress.ENV: "0"}
    assert (Path(plan.RANK_HOOK) / "sitecustomize.py").is_file()


def test_the_watchdog_calls_a_sleeping_rank_idle_and_a_busy_one_never(tmp_path):
    env = {**os.environ, "RANK": "3"}
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], env=env)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"], env={**os.environ, "RANK": "4"})
    try:
        for proc, rank in ((sleeper, 3), (burner, 4)):
            data = progress._LAYOUT.pack(progress.MAGIC, progress.WORLD, 0, proc.pid, 5, 5, 0.0, b"barrier", b"0")
            (tmp_path / f"{progress.PREFIX}.{os.getuid()}.run.1.{rank}").write_bytes(data)
        activity = rankprogress.Activity()
        pids = [sleeper.pid, burner.pid]
        ready = threading.Event()
        while not ready.wait(0.05):  # the sleeper reached its sleep: its state is S
            ready.set() if rankprogress._stat(sleeper.pid)[0] == "S" else None
        rankprogress.report("run", 1, pids, activity, shm=str(tmp_path))
        first = {p: activity.active_at[p] for p in pids}
        for p in pids:  # as if seconds had passed: the samples' times are the watchdog's
            activity.samples[p] = [(t - 5.0, ticks, io) for t, ticks, io in activity.samples[p]]
            activity.active_at[p] = first[p] - 5.0
        word = rankprogress.report("run", 1, pids, activity, shm=str(tmp_path))
        states = {r.rank: r for r in hang.parse(word[len("prog="):], "n")}
        assert states[3].idle >= 4.9 and states[4].idle < 1.0, word
        assert rankprogress.report("run", 1, [burner.pid], activity, shm=str(tmp_path)).count(":") == 7
        assert rankprogress.remove_records("run", 1, shm=str(tmp_path)) == 2
    finally:
        for p in (sleeper, burner):
            p.kill()
            p.wait()


def test_a_hung_collective_is_explained_with_its_ranks_words(tmp_path):
    log = tmp_path / "launcher.log"
    log.write_text("")
    failure = Failure("hung-collective", "rank 1 did nothing for 2.4s ...", "node1", rank=1)
    exp = explain_failure(failure, log, {log: 0}, 0.0, run_id="r1")
    assert exp.signature == "hung-collective" and exp.retry and "rank 1 did nothing" in exp.to_dict()["cause"]


def test_a_collective_called_differently_is_not_restarted_into_the_same_hang(tmp_path):
    """Two ranks at one collective in different operations can never meet (live-fsdp-state-dict-rank0-only: the
    supervisor saw it before gloo's timeout, so no log says more): the answer is the mismatch, with no restart."""
    log = tmp_path / "launcher.log"
    log.write_text("")
    failure = hung_collective([waiting(0, 2.0, "all_gather"), waiting(1, 2.0, "barrier")], 2)
    exp = explain_failure(failure, log, {log: 0}, 0.0, run_id="r1")
    assert exp.signature == "collective-mismatch" and not exp.retry, exp
    assert "rank 0 waits in all_gather and rank 1 in barrier" in exp.evidence


def test_a_node_that_came_back_gets_a_warm_launch_py_at_once(monkeypatch):
    """A restarted node lost its pre-warmed launch.py: the supervisor starts one there over its ssh as soon as the
    node answers (runs/runnerproc.py), which imports at once instead of waiting for a launch.py to watch."""
    from dscluster.launcher import warm
    from dscluster.runs.supervising.runnerproc import prestart_nodes

    asked, done = [], threading.Event()

    class Runner:
        def run(self, argv, timeout):
            asked.append(argv)
            done.set()

    prestart_nodes({"node2": Runner(), "node1": Runner()}, ["node2"], "/venv/bin/python", "run-1", 3, 60)
    assert done.wait(30) and len(asked) == 1 and asked[0][-4:] == ["prestart", "run-1", "3", "60"]
    assert "dscluster.launcher.warm" in asked[0] and asked[0][0] == "/venv/bin/python"
    spawned = []
    monkeypatch.setattr(warm, "spawn_server", lambda *a: spawned.append((a, os.environ["DSCLUSTER_RUN_ID"])))
    monkeypatch.setenv("DSCLUSTER_RUN_ID", "other")
    assert warm.main(["prestart", "run-1", "3", "60"]) == 0
    assert spawned == [(("run-1", 3, 0, 0.0, 60.0), "run-1")]
    assert warm._wait_to_import(0, "-", 15.0)  # nothing to watch: import now


def test_a_node_lost_mid_run_that_ssh_cannot_reach_is_a_dropped_node_waited_for(monkeypatch, tmp_path):
    """judging.Judge.explain_attempt: a node that answered the launch's checks and refuses ssh mid-run (crashed, its sshd
    coming back) is ssh-255 (restartable: waited for), not ssh-unreachable ("restarting does not help")."""
    from types import SimpleNamespace

    from dscluster import explain as explainer
    from dscluster.runs.supervising import judging

    refused = explainer.custom("ssh-unreachable", "cannot be reached", "fix the node",
                               "ssh: connect to host node2 port 22: Connection refused", retry=False)
    monkeypatch.setattr(judging, "explain_failure", lambda *a, **k: refused)
    monkeypatch.setattr(judging, "sim_name", lambda record: None)
    monkeypatch.setattr(judging.store, "save_dir", lambda run_dir, record: tmp_path)

    judge = judging.Judge(lambda: SimpleNamespace(id="r1", attempts=()), tmp_path, backends.get("pdsh"), lambda text: None)
    judge._rank_node_names = lambda: {}

    def explained(failure: Failure):
        return judge.explain_attempt(failure, None, judging.AttemptLogs(0.0), restarts_left=True)

    exp = explained(Failure("node-lost", "node2: the connection closed", "node2"))
    assert (exp.signature, exp.retry, exp.evidence) == ("ssh-255", True, refused.evidence)
    assert exp.cause == next(s for s in judging.SIGNATURES if s.name == "ssh-255").cause
    # Never reached (no node named: the launch's own checks), or a rank's failure: as the logs say.
    assert explained(Failure("unreachable", "no watchdog")).signature == "ssh-unreachable"
    assert explained(Failure("rank-failed", "exit 1", "node2")).signature == "ssh-unreachable"


def test_a_rank_blocked_on_a_socket_is_never_idle_and_one_asleep_is():
    # Each says so right before it blocks: a process still starting (loaded machine) also sleeps, elsewhere.
    code = {"socket": "import socket; a, b = socket.socketpair(); print(flush=True); a.recv(1)",
            "sleep": "import time; print(flush=True); time.sleep(120)"}
    procs = {k: subprocess.Popen([sys.executable, "-c", v], stdout=subprocess.PIPE) for k, v in code.items()}
    try:
        for p in procs.values():
            p.stdout.readline()
        ready = threading.Event()
        while not ready.wait(0.05):  # both reached their wait
            ready.set() if all(rankprogress._stat(p.pid)[0] == "S" for p in procs.values()) else None
        with open(f"/proc/{procs['sleep'].pid}/wchan") as f:
            shown = f.read().strip() not in ("", "0")
        assert rankprogress.waits_outside(procs["socket"].pid) == shown  # where the kernel shows wait channels
        assert not rankprogress.waits_outside(procs["sleep"].pid)
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
            p.stdout.close()


def test_a_rank_that_polls_with_short_sleeps_is_never_idle_however_little_cpu_it_uses():
    # A rank 0 waiting for a file another process writes (`while not exists: time.sleep(0.5)`) while its peers wait
    # in a barrier is healthy: its CPU is below a clock tick, but its main thread wakes. One long sleep does not.
    poller = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.3)"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        for proc in (poller, sleeper):
            ready = threading.Event()
            while not ready.wait(0.05):
                ready.set() if rankprogress._stat(proc.pid)[0] == "S" else None
        activity, t0 = rankprogress.Activity(), time.monotonic()
        woke = threading.Event()
        for p in (poller, sleeper):
            activity.idle_for(p.pid, 0, t0)
        start = rankprogress._wakes(poller.pid)
        while not woke.wait(0.05):  # the poller woke at least twice since: it polls
            woke.set() if rankprogress._wakes(poller.pid) >= start + 2 else None
        later = t0 + 5.0  # as if 5 s had passed: the watchdog's clock
        assert activity.idle_for(poller.pid, 0, later) == 0.0
        assert activity.idle_for(sleeper.pid, 0, later) >= 4.9
    finally:
        for p in (poller, sleeper):
            p.kill()
            p.wait()

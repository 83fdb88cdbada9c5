"""The supervisor's parts, each alone with fakes (runs/supervising/supervisor.py composes them): the watching
part reads an attempt into typed observations, the judging part turns observations into a verdict and a failure
into a judgement, the recording part owns the record and what is written, the restarting part owns the attempt
policy, and a backend's hooks get a narrow context, not the supervisor."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

from dscluster import explain as explainer
from dscluster.launcher import backends
from dscluster.runs.records import store
from dscluster.runs.records.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.supervising.detect import NodeView
from dscluster.runs.supervising.hang import RankState
from dscluster.runs.supervising.hooks import HookContext, hooks_class
from dscluster.runs.supervising.judging import AttemptLogs, Judge
from dscluster.runs.supervising.restarting import Restarter
from dscluster.runs.supervising.runbook import RunBook
from dscluster.runs.supervising.verdict import Failure
from dscluster.runs.supervising.watching import AttemptWatch, Observation


def _record(**launch) -> RunRecord:
    return RunRecord(id="r-1", launch=LaunchSpec.from_json({"program": "t.py", **launch}))  # run.json's keys


def _run_dir(tmp_path):
    run_dir = tmp_path / "runs" / "r-1"
    (run_dir / "logs").mkdir(parents=True)
    return run_dir


def _obs(**kw) -> Observation:
    base = dict(now=0.0, rc=None, text="", ranks_ok=0, world=2, nodes=(), idle=0.0, lost=None)
    return Observation(**{**base, **kw})


def _judge(tmp_path, record: RunRecord, logged: list | None = None) -> Judge:
    return Judge(lambda: record, _run_dir(tmp_path), backends.get("local"), (logged if logged is not None else []).append)


# ---- judging ------------------------------------------------------------------------------------
def test_the_judge_reads_observations_in_the_order_of_precedence(tmp_path):
    judge = _judge(tmp_path, _record(stall_timeout=60.0))
    assert judge.verdict(_obs()).failure is None and not judge.verdict(_obs()).clean_exit  # runs on
    # a failure line beats the runner's exit code (DeepSpeed's runner exits 0 when pdsh dies by a signal)
    line = judge.verdict(_obs(rc=0, ranks_ok=2, text="[launch.py] Killing subprocess 42\n")).failure
    assert line is not None and line.kind == "rank-failed"
    assert judge.verdict(_obs(rc=0, ranks_ok=2)).clean_exit  # every rank said it exited: the nodes must agree
    doubted = judge.verdict(_obs(rc=0, ranks_ok=1)).failure  # a rank never said so
    assert doubted is not None and doubted.kind == "exit"
    assert judge.verdict(_obs(rc=3)).failure.detail == "the DeepSpeed runner exited with 3"
    gone = NodeView("node1", started=True, closed=True, reaped=False, silent_for=0.5)
    assert judge.verdict(_obs(nodes=(gone,), idle=999.0)).failure.kind == "node-lost"  # a node beats a stall
    lost = explainer.custom("slurm-job-ended", "ended", "restart", "JobState=FAILED", retry=False)
    by_hook = judge.verdict(_obs(lost=lost, idle=999.0)).failure
    assert by_hook.kind == "local-lost" and by_hook.explanation is lost  # the backend's own watch beats a stall
    # a collective hung by a live rank (hang.py) is a node's failure: it comes before the backend's watch and a stall
    mismatched = (RankState(0, "node1", 5, 5, "all_reduce", "0", 2.0, 0.0),
                  RankState(1, "node2", 5, 5, "broadcast", "0", 2.0, 0.0))
    assert judge.verdict(_obs(ranks=mismatched, lost=lost, idle=999.0)).failure.kind == "hung-collective"
    assert judge.verdict(_obs(idle=61.0)).failure.kind == "stalled"
    assert judge.verdict(_obs(idle=59.0)).failure is None
    assert Judge.still_busy(["node2"]).detail == "the launcher exited 0 while ranks still ran on node2"


def test_the_judge_gives_no_futile_restart(tmp_path):
    logged: list[str] = []
    judge = _judge(tmp_path, _record(max_restarts=3), logged)
    (judge.log_path).write_text("attempt 1: ds t.py\nRuntimeError: CUDA error: out of memory\n")
    judge.begin((None, None))
    failure = Failure("exit", "the DeepSpeed runner exited with 1")
    first = judge.judge_failure(1, failure, 1, AttemptLogs(0.0), last=False, stopping=False, progress=(None, None))
    assert first.exit_code == 1 and first.recorded["attempt"] == 1
    assert logged and logged[0].startswith("after the failure: ")  # the judge's own note in the launcher log
    again = judge.judge_failure(2, failure, 1, AttemptLogs(0.0), last=False, stopping=False, progress=(None, None))
    if first.restart:  # a failure a restart may fix: not twice without progress
        assert not again.restart and again.recorded["no_restart"] == {"why": "same-failure", "previous": 1}
    else:
        assert again.recorded["no_restart"] == {"why": "cannot-help"}
    last = judge.judge_failure(3, failure, 1, AttemptLogs(0.0), last=True, stopping=False, progress=(5, 50))
    assert not last.restart and "no_restart" not in last.recorded  # no restart left: nothing to refuse


def test_a_survivor_that_only_says_its_peer_went_yields_to_the_rank_that_vanished_with_it(tmp_path):
    # Seen in CI twice: rank 2 (node2) SIGKILLed; rank 0 (node0) died of the closed connection within a heartbeat
    # of it and node0's launcher spoke first. The survivor's words are only about its peer: the failure is rank 2,
    # with its node's own code, logged after the failure was seen.
    def judged(rank0_error: str):
        judge = _judge(tmp_path / str(len(rank0_error)), _record(hosts=[["node0", 1], ["node1", 1], ["node2", 1]]))
        seen = ("attempt 1: ds t.py\nnode0: [2026-12-05 21:14:33,001] [ERROR] [launch.py:259:sigkill_handler] "
                "['python'] exits with return code = 1\n")
        judge.log_path.write_text(seen + "node2: [2026-12-05 21:14:33,400] [ERROR] [launch.py:259:sigkill_handler] "
                                  "['python'] exits with return code = -9\n")
        rank0 = judge.run_dir / "logs" / "20261205211424_rank0.log"
        rank0.write_text('[rank0]: Traceback (most recent call last):\n[rank0]:   File "/s/hang.py", line 34, in '
                         f"<module>\n[rank0]:     engine.step()\n[rank0]: {rank0_error}\n")
        judge.begin((None, None))
        failure = Failure("rank-failed", "exits with return code = 1", "node0", rank=0, peer=("node2", 2))
        logs = AttemptLogs(0.0, at_failure={judge.log_path: len(seen), rank0: rank0.stat().st_size})
        return judge.judge_failure(1, failure, 1, logs, last=True, stopping=False, progress=(None, None))

    got = judged("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
                 "closed by peer [10.0.0.12]:5819. This is typically caused by a remote worker crashing.")
    assert got.explanation.signature == "rank-signal" and got.reason == "rank 2 on node2 killed by SIGKILL", got
    assert got.exit_code == 137
    # Its own error (not about a peer) stays the cause.
    got = judged("ValueError: the tokenizer has no pad token")
    assert got.explanation.signature != "rank-signal" and "pad token" in got.reason, got


def test_the_supervisor_waits_for_the_vanished_ranks_launcher_to_report_its_code_before_the_teardown(tmp_path):
    # Seen in CI twice in one run: rank 1 (node1) SIGKILLed; node2's launcher reported its rank's gloo error first,
    # and the teardown reached node1's launch.py before its once-a-second poll: no code of node1's was ever logged,
    # so the attempt read as rank 2's "Connection reset by peer". The code comes before the teardown now.
    judge = _judge(tmp_path, _record(hosts=[["node0", 1], ["node1", 1], ["node2", 1]]))
    judge.log_path.write_text("attempt 1: ds t.py\nnode2: [2026-12-06 09:38:17,001] [ERROR] [launch.py:259:"
                              "sigkill_handler] ['python'] exits with return code = 1\n")
    assert not judge.await_code(1, "node1", 0.3)  # nothing from node1's launcher within the wait
    assert not judge.await_code(1, "node0", 0.2)
    late = "node1: [2026-12-06 09:38:17,700] [ERROR] [launch.py:259:sigkill_handler] ['python'] exits with return code = -9\n"

    def write_late():
        with judge.log_path.open("a") as f:
            f.write(late)

    writer = threading.Timer(0.3, write_late)
    writer.start()
    try:
        t0 = time.monotonic()
        assert judge.await_code(1, "node1", 30.0) and time.monotonic() - t0 < 10  # as soon as it is there
    finally:
        writer.cancel()
    # pdsh's 255 for a node is not its rank's code; another attempt's code is not this one's.
    judge.log_path.write_text("attempt 1: ds\nnode1: x exits with return code = -9\nattempt 2: ds\n"
                              "pdsh@vm: node1: ssh exited with exit code 255\n")
    assert not judge.await_code(2, "node1", 0.2) and judge.await_code(1, "node1", 0.2)


def test_a_kill_another_node_reported_before_the_failure_was_seen_beats_a_survivors_peer_error(tmp_path):
    # Seen in CI: the heartbeats did not pair them, but node2's launch.py had reported its rank SIGKILLed before the
    # supervisor read node0's line: the kill (in the snapshot, so before any teardown) is the failure.
    def judged(rank0_error: str):
        judge = _judge(tmp_path / str(len(rank0_error)), _record(hosts=[["node0", 1], ["node1", 1], ["node2", 1]]))
        judge.log_path.write_text(
            "attempt 1: ds t.py\nnode0: [2026-12-05 21:58:05,001] [ERROR] [launch.py:259:sigkill_handler] ['python'] "
            "exits with return code = 1\nnode2: [2026-12-05 21:58:05,090] [ERROR] [launch.py:259:sigkill_handler] "
            "['python'] exits with return code = -9\n")
        rank0 = judge.run_dir / "logs" / "20261205215756_rank0.log"
        rank0.write_text('[rank0]: Traceback (most recent call last):\n[rank0]:   File "/s/hang.py", line 34, in '
                         f"<module>\n[rank0]:     engine.step()\n[rank0]: {rank0_error}\n")
        judge.begin((None, None))
        failure = Failure("rank-failed", "exits with return code = 1", "node0", rank=0)
        return judge.judge_failure(1, failure, 1, AttemptLogs(0.0), last=True, stopping=False, progress=(None, None))

    got = judged("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
                 "closed by peer [10.0.0.12]:5819. This is typically caused by a remote worker crashing.")
    assert got.explanation.signature == "rank-signal" and got.reason == "a rank on node2 killed by SIGKILL", got
    assert got.exit_code == 137


# ---- watching ---------------------------------------------------------------------------------
class _Runner:
    """A runner process as the watch reads it: its exit code, once it has one."""

    def __init__(self):
        self.rc, self.pid, self.stdout = None, 0, None

    def poll(self):
        return self.rc


def test_the_watch_hands_out_typed_observations(tmp_path):
    run_dir = _run_dir(tmp_path)
    log = run_dir / "logs" / "launcher.log"
    log.write_text("before the attempt\n")
    asked: list[float] = []
    watch = AttemptWatch([], run_dir=run_dir, log_path=log, lost=lambda now: asked.append(now),
                         stall_timeout=30.0)
    runner = _Runner()
    watch.runner_started(runner, log.stat().st_size, world=2)
    with open(log, "a") as f:
        f.write("Process 1 exits successfully.\nhalf a li")
    first = watch.observe()
    assert first.text == "Process 1 exits successfully.\n" and first.ranks_ok == 1 and first.world == 2
    assert first.rc is None and first.nodes == () and len(asked) == 1 and first.idle < 30.0
    with open(log, "a") as f:
        f.write("ne\nProcess 0 exits successfully.\n")
    runner.rc = 0
    second = watch.observe()
    assert second.text == "half a line\nProcess 0 exits successfully.\n" and second.ranks_ok == 2
    assert second.rc == 0 and len(asked) == 1  # the backend's watch is not asked once the runner ended
    assert watch.busy_after(0.0) == [] and watch.dead_rank("node1", wait=0.0) is None
    watch.close()


# ---- recording --------------------------------------------------------------------------------
def test_the_book_owns_the_record_and_records_a_judgement(tmp_path):
    run_dir = _run_dir(tmp_path)
    book = RunBook(run_dir, _record())
    book.save(status="running")
    assert store.read_record(run_dir).status == "running" == book.record.status
    attempt = Attempt(1, started=store.now_iso())
    book.set_attempt(attempt)
    judge = _judge(tmp_path / "j", book.record)
    judged = replace(judge.judge_failure(1, Failure("exit", "the DeepSpeed runner exited with 7"), 7,
                                         AttemptLogs(0.0), last=False, stopping=False, progress=(None, None)),
                     recorded={"signature": "s", "retry": False, "no_restart": {"why": "cannot-help"}})
    book.record_judgement(1, attempt, judged)
    rec = store.read_record(run_dir)
    assert rec.attempts[-1].exit_code == judged.exit_code and rec.attempts[-1].reason == judged.reason
    assert rec.explanation["no_restart"] == {"why": "cannot-help"}
    events = [json.loads(line)["event"] for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert events == ["no-restart"]
    assert "not restarting: cannot-help" in book.log_path.read_text()
    book.finish("failed", judged.exit_code)
    assert store.read_record(run_dir).status == "failed"


# ---- restarting -------------------------------------------------------------------------------
def test_the_restarter_owns_the_attempt_policy(tmp_path):
    run_dir = _run_dir(tmp_path)
    book = RunBook(run_dir, _record(max_restarts=1, master_port=29600))
    stop = []
    restarter = Restarter(book, over_ssh=True, warm_launch=False, stop_wanted=lambda: bool(stop))
    assert restarter.max_attempts == 2 and restarter.restarts_left(1) and not restarter.restarts_left(2)
    assert restarter.port() == 29600  # the user's --master_port
    assert restarter.request(1, 29600, user_env={}, secrets={}).warm.endswith(":150")  # restart_wait + 30
    assert restarter.request(2, 29600, user_env={}, secrets={}).warm == "-"  # none after the last attempt
    assert restarter.before_restart(1, None, "why") == "restarting"  # a local run: no node to wait for
    assert book.record.status == "restarting"
    stop.append(True)
    assert restarter.before_restart(1, None, "why") == "stopped"
    events = [json.loads(line)["event"] for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert events == ["restart", "stopped"]


def test_a_wait_for_lost_nodes_asks_only_the_silent_ones_again(tmp_path, monkeypatch):
    # Each banner asked is an sshd child on the node: the nodes that answered are not asked every quarter second.
    from dscluster.runs.supervising import restarting

    book = RunBook(_run_dir(tmp_path), _record(max_restarts=1))
    restarter = Restarter(book, over_ssh=True, warm_launch=False, stop_wanted=lambda: False)
    restarter.runners = {h: object() for h in ("node0", "node1", "node2")}
    asked, silent = [], [["node2"], ["node2"], []]

    def silent_hosts(runners, timeout):
        asked.append(sorted(runners))
        return silent.pop(0)

    monkeypatch.setattr(restarting, "silent_hosts", silent_hosts)
    monkeypatch.setattr(restarting, "unreachable_hosts", lambda runners: [])
    monkeypatch.setattr(restarting, "sim_name", lambda record: None)
    assert restarter.wait_for_nodes() == []
    assert asked == [["node0", "node1", "node2"], ["node2"], ["node2"]]
    assert restarter.healed and restarter._came_back == ["node2"]


# ---- the backend's hooks ----------------------------------------------------------------------
def test_a_backends_hooks_get_a_narrow_context_not_the_supervisor(tmp_path):
    run_dir = _run_dir(tmp_path)
    book = RunBook(run_dir, _record())
    ctx = HookContext.of(book)
    ctx.save(status="running")
    ctx.event("hooked", n=1)
    ctx.log("from a hook")
    assert ctx.record is book.record and ctx.launch is book.record.launch and ctx.record.status == "running"
    assert "from a hook" in book.log_path.read_text()
    assert sorted(f for f in vars(ctx)) == ["current", "event", "log", "save"]  # nothing else crosses
    hooks = hooks_class(backends.get("local"))(ctx)
    assert hooks.allocate() and hooks.lost(0.0) is None and hooks.timed_out() is None


class _Gone:
    """A node's watchdog channel as went_first reads it: when (supervisor clock) its first ranks vanished."""

    _kill_sent = False  # the pinger thread reads it, and pings

    def send(self, _message):
        pass

    def __init__(self, node, gone):
        self.node, self._gone = node, gone

    def first_gone(self):
        return self._gone

    def close(self):
        pass


def test_the_rank_that_vanished_first_on_another_node_is_named_over_the_survivor_that_spoke_first(tmp_path):
    # Seen in CI: rank 2 (node2) SIGKILLed; rank 1 (node1) died of the closed connection a moment later, and
    # node1's launcher line reached the supervisor first. The heartbeats saw rank 2 go first.
    run_dir = _run_dir(tmp_path)
    log = run_dir / "logs" / "launcher.log"

    def watch(*chans):
        return AttemptWatch(list(chans), run_dir=run_dir, log_path=log, lost=lambda now: None, stall_timeout=0)

    assert watch(_Gone("node1", (10.9, [1])), _Gone("node2", (10.0, [2]))).went_first("node1") == ("node2", 2)
    # No heartbeat saw a rank of the failure's node go: nothing to compare with, the failure's node stays.
    assert watch(_Gone("node1", None), _Gone("node2", (10.0, [2]))).went_first("node1") is None
    # Within a heartbeat the order is not known: the node the failure was seen on stays.
    assert watch(_Gone("node1", (10.2, [1])), _Gone("node2", (10.0, [2]))).went_first("node1") is None
    # Its own rank went first, nobody else's went, or two went at once: nothing to change.
    assert watch(_Gone("node1", (10.0, [1])), _Gone("node2", (11.0, [2]))).went_first("node1") is None
    assert watch(_Gone("node1", (10.0, [1])), _Gone("node2", None)).went_first("node1") is None
    assert watch(_Gone("node1", (11.0, [1])), _Gone("node2", (10.0, [2, 3]))).went_first("node1") is None


class _GoneLater(_Gone):
    """A channel whose node heartbeats a vanished rank only on the `after`-th look (its heartbeat comes late)."""

    closed = False

    def __init__(self, node, gone, after):
        super().__init__(node, gone)
        self.looks, self.after = 0, after

    def first_gone(self):
        self.looks += 1
        return self._gone if self.looks >= self.after else None


def test_a_survivor_that_spoke_first_waits_for_the_other_nodes_heartbeats_to_name_the_rank_that_went(tmp_path):
    # Seen in CI under load: rank 0 (node0) SIGKILLed in a save; rank 1 (node1) raised gloo's "Connection closed
    # by peer" and its launcher line came before node0's next heartbeat. The rank named is node0's, once it says.
    run_dir = _run_dir(tmp_path)
    log = run_dir / "logs" / "launcher.log"

    def watch(*chans):
        return AttemptWatch(list(chans), run_dir=run_dir, log_path=log, lost=lambda now: None, stall_timeout=0)

    late = _GoneLater("node0", (10.0, [0]), after=3)
    assert watch(_Gone("node1", (10.1, [1])), late).gone_elsewhere("node1", 5.0) == ("node0", 0)
    assert late.looks == 3  # it waited for that heartbeat, and no longer
    # Nobody else's went within the wait, or two went at one heartbeat: no peer named.
    never = _GoneLater("node0", (10.0, [0]), after=10**6)
    assert watch(_Gone("node1", (10.1, [1])), never).gone_elsewhere("node1", 0.3) is None
    assert watch(_Gone("node1", (10.1, [1])), _GoneLater("node0", (10.0, [0, 2]), 1)).gone_elsewhere("node1", 1) is None

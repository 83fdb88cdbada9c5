"""The supervisor's failure detection as pure functions of observations (runs/supervising/detect.py), and its reach to
the nodes through the Runner interface (runs/supervising/nodes.py), with fake runners: no node, no ssh, no DeepSpeed."""

from __future__ import annotations

from dataclasses import dataclass, field

from dscluster.cluster.runner import CommandResult
from dscluster.launcher import backends
from dscluster.runs.supervising import detect
from dscluster.runs.supervising.detect import NodeView
from dscluster.runs.supervising.nodes import remote_reap, unreachable_hosts

LIMITS = {"connect_timeout": 30.0, "heartbeat_timeout": 10.0}


def view(node="node1", started=True, closed=False, reaped=False, silent_for=0.5):
    return NodeView(node, started, closed, reaped, silent_for)


def test_healthy_nodes_are_no_failure():
    assert detect.node_failure([view("node1"), view("node2", silent_for=9.9)], **LIMITS) is None
    # A watchdog still connecting (ssh handshake, interpreter start) is given the connect timeout.
    assert detect.node_failure([view("node1", started=False, silent_for=29.0)], **LIMITS) is None


def test_a_watchdog_that_never_starts_is_an_unreachable_node():
    for never in (view("node2", started=False, closed=True), view("node2", started=False, silent_for=31.0)):
        failure = detect.node_failure([view("node1"), never], **LIMITS)
        assert (failure.kind, failure.node) == ("unreachable", "node2")


def test_a_closed_session_is_a_lost_node_unless_its_watchdog_reaped():
    failure = detect.node_failure([view("node1", closed=True)], **LIMITS)
    assert (failure.kind, failure.node) == ("node-lost", "node1") and "connection to the node closed" in failure.detail
    assert detect.node_failure([view("node1", closed=True, reaped=True)], **LIMITS) is None


def test_silence_past_the_heartbeat_timeout_is_a_partition():
    failure = detect.node_failure([view("node1"), view("node2", silent_for=12.4)], **LIMITS)
    assert (failure.kind, failure.node) == ("node-lost", "node2") and "no heartbeat for 12.4s" in failure.detail


def test_a_failure_line_names_the_node_of_its_host():
    text = ("pdsh@master: 10.0.0.2: step 3\n"
            "pdsh@master: 10.0.0.3: [launch.py] Killing subprocess 4242\n")
    failure = detect.launcher_failure(text, ["10.0.0.2", "10.0.0.3"], {"10.0.0.3": "node2"})
    assert (failure.kind, failure.detail, failure.node) == ("rank-failed", "Killing subprocess 4242", "node2")
    assert detect.launcher_failure("Process 7 exits successfully\n", ["10.0.0.2"], {}) is None
    assert detect.launcher_failure("ssh exited with exit code 0\n", [], {}) is None
    assert detect.launcher_failure("exits with return code = -9\n", [], {}).node == "localhost"


def test_stall_and_exit_doubt():
    assert detect.stall_failure(901.0, 900.0).kind == "stalled"
    assert detect.stall_failure(899.0, 900.0) is None and detect.stall_failure(10**6, 0) is None
    assert "only 1 of 2 ranks" in detect.exit_doubt(backends.get("pdsh"), 1, 2)
    assert detect.exit_doubt(backends.get("pdsh"), 2, 2) is None
    assert detect.exit_doubt(backends.get("openmpi"), 0, 2) is None


@dataclass
class FakeRunner:
    """Answers every command with `returncode` and records what it was asked to run."""

    node: str
    returncode: int | None = 0
    stdout: str = ""
    calls: list = field(default_factory=list)

    def run(self, argv, *, env=None, input=None, timeout=30.0, cwd=None):
        self.calls.append((list(argv), timeout))
        return CommandResult(self.node, tuple(argv), self.returncode, self.stdout, "",
                             timed_out=self.returncode is None)

    def copy(self, local_path, remote_path, *, timeout=30.0):
        raise AssertionError("not used")

    def popen(self, argv, **kwargs):
        raise AssertionError("not used")


def test_unreachable_hosts_are_the_ones_whose_runner_fails_in_order():
    runners = {"node1": FakeRunner("node1"), "node2": FakeRunner("node2", returncode=255),
               "node3": FakeRunner("node3", returncode=None)}
    assert unreachable_hosts(runners, timeout=2.0) == ["node2", "node3"]
    assert runners["node1"].calls == [(["true"], 2.0)]


def test_remote_reap_runs_the_reaper_of_this_run_on_each_host():
    from dscluster.runs.records.record import RunRecord

    record = RunRecord.from_json({"id": "r-1", "launch": {"python": "/venv/bin/python",
                                                         "hosts": [["node1", 1], ["node2", 1]]}})
    runners = {"node1": FakeRunner("node1", stdout="reaped 3\n"), "node2": FakeRunner("node2", returncode=None)}
    out = remote_reap(record, ["node1", "node2"], timeout=4.0, grace=2.0, runners=runners)
    assert out == {"node1": "reaped 3", "node2": "timed out"}
    assert runners["node1"].calls == [(  # safe path: nothing from the cwd
        ["/venv/bin/python", "-P", "-m", "dscluster.runs.supervising.reaper", "r-1", "--grace=2.0"], 4.0)]

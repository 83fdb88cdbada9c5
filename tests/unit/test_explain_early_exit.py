"""A rank that exited 0 while the others still needed it (earlyexit.py): read in the launcher's own lines, only
when the answer is what the ranks left saw of a peer going away."""

from pathlib import Path

from dscluster import earlyexit, explain

DATA = Path(__file__).resolve().parents[1] / "data"
DS_LOG = (DATA / "explain_early" / "ds-launch-watchdog.log").read_text()
LIVE = DATA / "live" / "live-rank-returns-early-uneven-data"
SPAWN = ("[2026-11-02 14:03:11,20{i}] [INFO] [launch.py:256:main] process 4812{i} spawned with command: "
         "['python', '-u', 'train.py', '--local_rank={i}']\n")
PEER_CLOSED = ("[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
               "[10.0.0.2]:3920\n")
FAILED = ("[{t},004] [ERROR] [launch.py:325:sigkill_handler] ['python', '-u', 'train.py', '--local_rank=0'] exits "
          "with return code = 1\n")


def _log(*middle: str, failed_at: str = "2026-11-02 15:12:02") -> str:
    return SPAWN.format(i=0) + SPAWN.format(i=1) + "".join(middle) + FAILED.format(t=failed_at)


def _left(t: str = "2026-11-02 14:41:57") -> str:
    return f"[{t},830] [INFO] [launch.py:351:main] Process 48121 exits successfully.\n"


def test_deepspeeds_launcher_a_rank_that_left_then_its_peers_watchdog_timeout():
    found = explain.explain(DS_LOG)
    assert found.signature == "rank-left-early" and not found.retry
    assert found.params == {"who": "local rank 1", "pid": "48121"} and "exits successfully" in found.evidence
    assert "Join" in found.fix and "drop_last" in found.fix


def test_a_pasted_dscluster_log_and_the_supervisors_run_files_say_the_same():
    assert explain.explain((LIVE / "log.txt").read_text()).signature == "rank-left-early"
    logs = sorted((LIVE / "logs").iterdir())
    found = explain.explain_files(logs)
    assert found.signature == "rank-left-early" and found.params["who"] == "local rank 1"


def test_gloos_peer_closed_after_a_clean_exit():
    found = explain.explain(_log(_left(), PEER_CLOSED))
    assert found.signature == "rank-left-early" and found.params["pid"] == "48121"


def test_a_rank_that_left_after_the_failure_is_the_teardown_not_the_cause():
    # the exit 0 printed after the failing rank's line (a rank that handles SIGTERM), or printed before it by
    # another node's launcher but stamped later
    late = SPAWN.format(i=0) + SPAWN.format(i=1) + PEER_CLOSED + FAILED.format(t="2026-11-02 15:12:02") + _left(
        "2026-11-02 15:12:03")
    assert explain.explain(late).signature == "gloo-peer-closed"
    stamped_later = _log(PEER_CLOSED, _left("2026-11-02 15:12:09"))
    assert explain.explain(stamped_later).signature == "gloo-peer-closed"


def test_a_rank_with_its_own_error_keeps_it_though_another_rank_finished():
    own = ("[rank0]: Traceback (most recent call last):\n[rank0]:   File \"train.py\", line 9, in <module>\n"
           "[rank0]: KeyError: 'labels'\n")
    found = explain.explain(_log(_left(), own))
    assert found.signature != "rank-left-early" and "KeyError" in found.error["summary"]


def test_no_failed_rank_or_no_clean_exit_reads_nothing():
    assert earlyexit.read([SPAWN.format(i=0) + _left()]) is None  # every rank finished: a run that succeeded
    assert earlyexit.read([_log(PEER_CLOSED)]) is None
    unknown_pid = _left().replace("48121", "999")
    assert earlyexit.read([_log(unknown_pid)]).params["who"] == "a rank"


def test_hostile_lines_read_in_linear_time():
    import time
    line = "process 1 spawned with command: [" + "'x', " * 40_000 + "\n"
    started = time.perf_counter()
    assert earlyexit.read([line * 20 + "[" * 200_000 + "\n" + _left() + FAILED.format(t="2026-11-02 15:12:02")])
    assert time.perf_counter() - started < 5

"""`dscluster logs | status | runs | stop` on recorded runs (no processes): filters, formats, next steps."""

from __future__ import annotations

import pytest

from dscluster.cli import main
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


@pytest.fixture
def finished_run(dscluster_home, tmp_path):
    shared = tmp_path / "shared"
    rec = {"id": store.new_run_id("views"), "name": "views", "argv": ["train.py"], "env": {}, "world_size": 2,
           "launch": {"hosts": [["node0", 1], ["node1", 1]]}}
    run_dir = store.create_run(shared, RunRecord.from_json(rec))
    rec = store.read_record(run_dir).to_json()
    rec.update(status="succeeded", exit_code=0, attempts=[
        {"n": 1, "started": store.now_iso(), "ended": store.now_iso(), "exit_code": 0, "reason": "succeeded",
         "rank_nodes": ["node0", "node1"]}])
    store.write_record(run_dir, RunRecord.from_json(rec))
    (run_dir / "logs" / "20261129_rank1.log").write_text("step 1/2 loss 3.0\n")
    return run_dir


def test_logs_name_the_valid_ranks_and_nodes_instead_of_printing_nothing(finished_run, capsys):
    rid = finished_run.name
    assert main(["logs", rid, "--rank", "7"]) == 2
    err = capsys.readouterr().err
    assert "no rank 7" in err and "0 to 1" in err
    assert main(["logs", rid, "--node", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch'" in err and "node0, node1" in err
    assert main(["logs", rid, "--node", "node1"]) == 0
    assert "[node1 1] step 1/2 loss 3.0" in capsys.readouterr().out
    assert main(["logs", rid, "--rank", "1", "-f"]) == 0  # a finished run: follow ends at once, with next steps
    out = capsys.readouterr().out
    assert "succeeded" in out and f"dscluster status {rid}" in out


def test_status_runs_and_stop_of_a_finished_run_read_cleanly(finished_run, tmp_path, capsys):
    from dscluster.commands.runview import shown_time

    rid = finished_run.name
    rec = store.read_record(finished_run).to_json()
    outside = tmp_path / "elsewhere" / "ckpt"  # --save-dir outside the run directory
    (outside / "step-4").mkdir(parents=True)
    (outside / "step-4" / "COMMIT.json").write_text("{}")
    rec["launch"].update(args=["--steps", "8", "--save-dir", str(outside)], cwd=str(tmp_path))
    rec["attempts"].append({"n": 2, "started": "2026-11-29T19:47:21+0000", "ended": None, "exit_code": None,
                            "reason": None})
    rec["created"] = "2026-11-29T19:47:21+0000"
    store.write_record(finished_run, RunRecord.from_json(rec))
    assert main(["status", rid]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "exit 0" in out
    assert "step 4" in out  # read from the run's own save dir
    assert main(["runs"]) == 0
    assert shown_time("2026-11-29T19:47:21+0000") in capsys.readouterr().out
    assert shown_time("2026-11-29T19:47:21+00:00") == shown_time("2026-11-29T19:47:21+0000")
    assert "+" not in shown_time("2026-11-29T19:47:21+00:00")
    assert main(["stop", rid]) == 0
    out = capsys.readouterr().out
    assert "already finished" in out and f"dscluster status {rid}" in out


def test_negative_restart_and_timeout_settings_are_refused(dscluster_home, tmp_path, capsys):
    script = tmp_path / "t.py"
    script.write_text("print('hi')\n")
    for flag, value, words in (("--max-restarts", "-1", "0 or more"), ("--restart-wait", "-5", ">= 0"),
                               ("--stall-timeout", "nan", "finite"), ("--local", "0", "from 1 to 1024")):
        args = ["launch", "--local", "1", flag, value] if flag != "--local" else ["launch", flag, value]
        with pytest.raises(SystemExit) as exit_:
            main([*args, "--dry-run", str(script)])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {flag}: " in err and words in err and "fix:" in err, err
    with pytest.raises(SystemExit):
        main(["stop", "some-run", "--timeout", "-1"])
    assert "argument --timeout: '-1': give a finite number of seconds >= 0" in capsys.readouterr().err


def test_the_failed_rank_event_names_the_node_not_pdshs_own_host():
    from dscluster.runs.supervising.detect import host_of_line

    text = "x\npdsh@vm: node1: ssh exited with exit code 3\n"
    assert host_of_line(text, text.index("ssh exited"), ["node0", "node1"]) == "node1"
    text = "node0: [2026-11-29 19:47:25,822] [INFO] [launch.py:253:sigkill_handler] Killing subprocess 1\n"
    assert host_of_line(text, text.index("Killing"), ["node0", "node1"]) == "node0"
    text = "[2026-11-29 19:47:25,822] [INFO] [launch.py:253:sigkill_handler] Killing subprocess 1\n"
    assert host_of_line(text, text.index("Killing"), []) == "localhost"
    assert host_of_line(text, text.index("Killing"), ["node0"]) is None


def test_a_run_whose_supervisor_died_shows_lost_everywhere_and_waiting_ends(dscluster_home, tmp_path, capsys):
    import socket
    import subprocess

    from dscluster.api import Run

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs: the supervisor was kill -9'd
    shared = tmp_path / "shared"
    run_dir = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("orphan"), "name": "orphan", "argv": ["t.py"],
                                        "env": {}, "world_size": 1}))
    rec = store.read_record(run_dir).to_json()
    rec.update(status="running", supervisor_pid=gone.pid, supervisor_host=socket.gethostname())
    store.write_record(run_dir, RunRecord.from_json(rec))
    assert main(["runs"]) == 0
    assert "lost" in capsys.readouterr().out
    assert main(["status", rec["id"]]) == 0
    assert "supervisor is gone" in capsys.readouterr().out
    run = Run(rec["id"], [shared / "runs"])
    assert run.status == "lost" and run.done and run.wait(timeout=5) == "lost"
    assert run.summary()["explanation"]["signature"] == "supervisor-lost"
    assert store.read_record(run_dir).status == "running"  # shown, not written: the record is the supervisor's


def test_runs_of_a_simulated_cluster_that_is_down_stay_listed(dscluster_home, capsys):
    kept = dscluster_home / "sims" / "rehearsal" / "shared"  # what `sim down` keeps (not --purge)
    run_dir = store.create_run(kept, RunRecord.from_json({"id": store.new_run_id("simrun"), "name": "simrun", "argv": ["t.py"],
                                      "env": {}, "world_size": 3}))
    assert main(["runs"]) == 0
    assert run_dir.name in capsys.readouterr().out
    assert main(["status", "simrun"]) == 0

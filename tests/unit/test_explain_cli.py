"""`dscluster explain FILE... | -` on logs of runs dscluster did not start (a raw deepspeed run, torchrun, Slurm)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from dscluster import cli
from dscluster.i18n import catalog

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


def test_explain_a_raw_deepspeed_log(capsys):
    rc = cli.main(["explain", str(DATA / "device-mismatch.log")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "first error: rank 1: RuntimeError: Expected all tensors to be on the same device" in out
    assert "(/workspace/train.py:22)" in out
    assert "cause: One operation got tensors on different devices" in out
    assert "restart can help: no" in out


def test_explain_reads_stdin_and_speaks_zh_tw(monkeypatch, capsys):
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    monkeypatch.setattr("sys.stdin", io.StringIO((DATA / "local-rank-arg.log").read_text()))
    rc = cli.main(["explain", "-"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "最先的錯誤" in out and "--no_local_rank" in out and "重新啟動有幫助: 否" in out.replace("：", ": ")


def test_explain_json_and_several_files(tmp_path, capsys):
    r0, r1 = tmp_path / "job_rank0.log", tmp_path / "job_rank1.log"
    r0.write_text("[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer\n")
    r1.write_text((DATA / "ds-batch-assert.log").read_text().replace("[rank2]: ", ""))
    assert cli.main(["explain", "--json", str(r0), str(r1)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["signature"] == "ds-batch-assert" and d["restart_can_help"] is False
    assert d["error"]["rank"] == 1 and d["error"]["type"] == "AssertionError"


def test_explain_says_so_when_nothing_is_known_and_refuses_a_missing_file(tmp_path, capsys):
    quiet = tmp_path / "ok.log"
    quiet.write_text("step 1 loss 3.2\nstep 2 loss 3.1\n")
    assert cli.main(["explain", str(quiet)]) == 1
    assert "no known failure" in capsys.readouterr().out
    assert cli.main(["explain", str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert "nope.log" in err and "Traceback" not in err


def test_status_shows_the_first_error_and_why_no_restart_was_tried(monkeypatch, capsys):
    from dscluster import explain as runs  # no_restart_note lives beside error_line

    exp = {"signature": "python-error", "cause": "c", "fix": "f", "retry": False, "evidence": "e",
           "error": {"type": "ValueError", "summary": "ValueError: warmup_num_steps must be positive (train.py:22)",
                     "who": "rank 0 on node1", "rank": 0, "node": "node1"},
           "no_restart": {"why": "cannot-help"}}
    assert runs.no_restart_note(exp).startswith("not restarted: a restart cannot help")
    same = {**exp, "no_restart": {"why": "same-failure", "previous": 1}}
    assert "attempt 1" in runs.no_restart_note(same)
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    assert runs.no_restart_note(same).startswith("未重新啟動")


def test_the_api_and_the_panels_data_carry_the_first_error(tmp_path, monkeypatch):
    import json as _json

    import dscluster
    from dscluster import explain
    from dscluster.jupyter import rundata

    exp = explain.explain((DATA / "device-mismatch.log").read_text().replace("[rank1]: ", "node2: ")).to_dict()
    run_id = "train-20261203-000000-abcd"
    run_dir = tmp_path / "runs" / run_id
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(_json.dumps({"id": run_id, "status": "failed", "explanation": exp}))
    run = dscluster.Run(run_id, [tmp_path / "runs"])
    assert run.error.startswith("node2: RuntimeError: Expected all tensors to be on the same device")
    assert run.explanation["restart_can_help"] is False and run.explanation["error"]["where"] == "/workspace/train.py:22"
    shown = rundata.summary(rundata.RunRef(run_id, run_dir))["explanation"]
    assert shown["error_line"] == run.error
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    err = {**exp["error"], "rank": 1, "who": "rank 1 on node2"}
    assert explain.error_line(err).startswith("node2 上的 rank 1: RuntimeError")
    assert explain.Explanation("x", "c", "f", False, "e", error=err).error_line.startswith("rank 1 on node2: ")


def test_explain_a_run_says_what_its_supervisor_recorded(tmp_path, monkeypatch, capsys):
    """`dscluster explain RUN`: the same explanation as status and the panel (a full disk, with its figures)."""
    from dscluster.runs.preparing import diskspace
    from dscluster.runs.records import store

    shared = tmp_path / "shared"
    monkeypatch.setenv("DSCLUSTER_SHARED", str(shared))
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path / "home"))
    exp = diskspace.explanation(shared / "runs" / "full-1" / "checkpoints", "full-1",
                                "OSError: [Errno 28] No space left on device: '/data/ck/step-9/x.pt'")
    run_dir = store.run_path(shared, "full-1")
    run_dir.mkdir(parents=True)
    store.write_record(run_dir, store.RunRecord.from_json(
        {"id": "full-1", "status": "failed", "launch": {"program": "t.py", "launcher": "local"},
         "explanation": exp.to_dict()}))
    assert cli.main(["explain", "full-1"]) == 0
    out = capsys.readouterr().out
    assert "run full-1: failed" in out and "no space left on device: /" in out and "MiB free" in out, out
    assert "--keep" in out and "restart can help: no" in out
    done = store.run_path(shared, "ok-1")
    done.mkdir(parents=True)
    store.write_record(done, store.RunRecord.from_json(
        {"id": "ok-1", "status": "succeeded", "launch": {"program": "t.py", "launcher": "local"}}))
    assert cli.main(["explain", "ok-1"]) == 1
    assert "has no failure to explain (succeeded)" in capsys.readouterr().out

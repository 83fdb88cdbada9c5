"""Every known failure signature has a real-looking log under tests/data/explain/<signature>.log."""

from pathlib import Path

import pytest

from dscluster import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


@pytest.mark.parametrize("sig", [s.name for s in explain.SIGNATURES])
def test_each_signature_is_recognised_in_its_log(sig):
    log = DATA / f"{sig}.log"
    assert log.is_file(), f"missing test log for signature {sig}"
    found = explain.explain(log.read_text())
    assert found is not None and found.signature == sig
    assert found.cause and found.fix and found.evidence


def test_root_cause_wins_over_the_symptom_on_other_ranks():
    text = (DATA / "cuda-oom.log").read_text()
    assert "remote process exited" in text  # the symptom is there too
    assert explain.explain(text).signature == "cuda-oom"
    assert explain.explain(text).retry is False


def test_unknown_text_is_not_explained_and_files_pick_the_most_specific(tmp_path):
    assert explain.explain("step 1 loss 3.2\nall good\n") is None
    a, b = tmp_path / "launcher.log", tmp_path / "rank1.log"
    a.write_text((DATA / "gloo-peer-closed.log").read_text())
    b.write_text((DATA / "module-not-found.log").read_text())
    assert explain.explain_files([a, b]).signature == "module-not-found"
    assert explain.explain_files([tmp_path / "missing.log"]) is None


def test_explanation_serialises_for_run_json():
    d = explain.explain((DATA / "address-in-use.log").read_text()).to_dict()
    assert set(d) == {"signature", "cause", "fix", "retry", "evidence"}
    assert d["signature"] == "address-in-use" and d["retry"] is True


def test_the_programs_own_error_and_fix_lines_are_the_explanation_and_beat_the_sigkill(tmp_path):
    # launch.py SIGKILLs the sibling ranks after the first fails: its "sigkill_handler" line is noise.
    launcher, rank0, rank1 = tmp_path / "launcher.log", tmp_path / "x_rank0.log", tmp_path / "x_rank1.log"
    launcher.write_text((DATA / "input-error-exit.log").read_text())
    rank1.write_text("[rank 1] error: the save directory /ro/ckpt is not writable\n"
                     "[rank 1]   fix: pick a writable --save-dir\n")
    rank0.write_text("error: data directory /tmp/nope-data does not exist\n"
                     "  fix: prepare it first: dscluster data prepare SRC... --out DIR\n")
    found = explain.explain_files([launcher, rank1, rank0])
    assert found.signature == "program-error" and found.retry is False
    assert found.cause == "the save directory /ro/ckpt is not writable"  # the first failing rank's file first
    assert found.fix == "pick a writable --save-dir"
    zh = explain.explain("錯誤: 資料目錄 /x 不存在\n  解法: 先準備資料\n")
    assert zh.cause == "資料目錄 /x 不存在" and zh.fix == "先準備資料"
    assert explain.explain("ERROR: pip could not install\n") is None  # a library's ERROR line is not ours


def test_first_failing_rank_exit_code_is_read_from_the_launcher_log(tmp_path):
    from dscluster.runs.verdict import first_rank_exit_code

    log = tmp_path / "launcher.log"
    log.write_text("[dscluster 10:00:00] attempt 1: deepspeed ...\nexits with return code = 1\n"
                   "[dscluster 10:00:09] attempt 2: deepspeed ...\n" + (DATA / "input-error-exit.log").read_text())
    assert first_rank_exit_code(log, {}, "attempt 2: ") == 3
    assert first_rank_exit_code(log, {log: 10}, "attempt 2: ") is None
    assert first_rank_exit_code(tmp_path / "none.log", {}, "attempt 1: ") is None


def test_the_launchers_sigkill_handler_is_not_taken_for_a_kill():
    # Every launch.py teardown line comes from "sigkill_handler"; a rank that aborted (-6) at exit was
    # once explained as an OOM kill.
    text = (DATA / "aborted.log").read_text()
    assert "sigkill_handler" in text
    assert explain.explain(text).signature == "aborted"
    assert explain.explain("[INFO] [launch.py:253:sigkill_handler] Killing subprocess 26\n") is None


def test_a_template_explanation_is_recorded_in_english_and_shown_in_the_readers_language(monkeypatch):
    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", "unreachable: node2", retry=False,
                         nodes="node2", limit="120", heal="dscluster sim heal node2")
    d = exp.to_dict()
    # run.json stays readable as it is: English, values filled in
    assert d["cause"].startswith("node2 did not come back within 120s") and d["fix"].startswith("dscluster sim heal")
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    cause, fix = explain.localized(d)
    assert "node2" in cause and "120" in cause and "秒" in cause
    assert fix.startswith("dscluster sim heal node2") and "然後" in fix
    # a plain signature's text goes through the catalog as before
    cause, _fix = explain.localized(explain.explain((DATA / "address-in-use.log").read_text()).to_dict())
    assert cause != explain.explain((DATA / "address-in-use.log").read_text()).cause


def test_the_panel_api_shows_a_runs_explanation_in_the_servers_language(tmp_path, monkeypatch):
    import json

    from dscluster.jupyter import rundata

    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", retry=False,
                         nodes="node3", limit="60", heal="dscluster sim heal node3")
    run_dir = tmp_path / "r1-20261129-000000-abcd"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"id": run_dir.name, "status": "failed", "explanation": exp.to_dict()}))
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    shown = rundata.summary(rundata.RunRef(run_dir.name, run_dir))["explanation"]
    assert shown["signature"] == "node-down" and "node3" in shown["cause"] and "60 秒" in shown["cause"]

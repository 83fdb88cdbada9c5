"""The panel reads runs through the runs layer: the store's lookup and listing, `runs.views.summary`, the CLI's
rule for where runs live. So the panel, `dscluster status --json` and `dscluster runs` agree on each run."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from dscluster import explain
from dscluster.cli import main
from dscluster.errors import RunError
from dscluster.jupyter import clusterview, rundata
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


def _panel(run_id: str) -> dict:
    dirs = clusterview.resolve(None).runs_dirs()
    return {"listed": {r["id"]: r for r in rundata.list_runs(dirs)},
            "summary": rundata.summary(rundata.find_run(dirs, run_id))}


def _status_json(capsys, ref: str) -> dict:
    main(["status", ref, "--json"])
    return json.loads(capsys.readouterr().out)


def _run(shared, name: str, **fields) -> tuple[str, object]:
    record = RunRecord.from_json({"id": store.new_run_id(name), "name": name, "argv": ["t.py"], "env": {},
                                  "world_size": 2, "launch": {"program": "t.py", "args": ["--steps", "9"], "hosts": []}})
    run_dir = store.create_run(shared, record)
    store.write_record(run_dir, store.read_record(run_dir).replace(**fields))
    return run_dir.name, run_dir


@pytest.fixture
def no_spec(dscluster_home, tmp_path, monkeypatch):
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "shared"


def test_the_panel_and_dscluster_status_agree_on_each_run(no_spec, capsys):
    gone = subprocess.Popen(["true"])
    gone.wait()  # its supervisor was kill -9'd: "lost", with the same explanation everywhere
    lost, _ = _run(no_spec, "lost", status="running", supervisor_pid=gone.pid, supervisor_host=socket.gethostname(),
                   attempts=[{"n": 1, "started": store.now_iso()}])
    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", retry=False, nodes="node9", limit="60",
                         heal="dscluster sim heal node9").to_dict()
    failed, failed_dir = _run(no_spec, "failed", status="failed", exit_code=1, explanation=exp,
                              attempts=[{"n": 1, "exit_code": 1}, {"n": 2, "exit_code": 1}])
    with open(failed_dir / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": 7, "loss": 2.5, "tokens_per_s": 11.0}) + "\n")
    for ref in (lost, failed):
        cli, panel = _status_json(capsys, ref), _panel(ref)
        for shown in (panel["summary"], panel["listed"][ref]):
            assert shown["status"] == cli["status"] and shown["attempts"] == len(cli["attempts"])
            assert shown["explanation"]["signature"] == cli["explanation"]["signature"]
            assert shown["explanation"]["cause"] == explain.localized(cli["explanation"])[0]
            assert shown["step"] == (cli["metrics"] or {}).get("step")
    assert _status_json(capsys, lost)["status"] == "lost"
    assert _panel(failed)["summary"]["step"] == 7 and _panel(failed)["summary"]["total_steps"] == 9


def test_the_panel_finds_runs_where_the_cli_does(no_spec, dscluster_home, tmp_path, capsys):
    kept = dscluster_home / "sims" / "psim" / "shared"  # a simulated cluster that is down (not purged)
    run_id, run_dir = _run(kept, "simrun", status="succeeded", exit_code=0)
    assert clusterview.resolve(None).shared_dirs() == [no_spec, kept]
    from dscluster.commands.runview import shared_dirs

    assert clusterview.resolve(None).shared_dirs() == shared_dirs(None)
    panel = _panel(run_id)
    assert run_id in panel["listed"] and panel["summary"]["status"] == _status_json(capsys, run_id)["status"]
    spec = tmp_path / "c.toml"
    spec.write_text(f'[cluster]\nname = "pc"\nshared_dir = "{tmp_path / "pc"}"\n[[nodes]]\naddress = "127.0.0.1"\nslots = 1\n')
    # A cluster asked for by name: its runs and this machine's, as `--cluster` has it.
    assert clusterview.resolve(str(spec)).shared_dirs() == shared_dirs(str(spec)) == [tmp_path / "pc", no_spec]


def test_a_symlinked_run_directory_is_not_a_run_anywhere(no_spec, tmp_path, capsys):
    run_id, run_dir = _run(no_spec, "real", status="succeeded", exit_code=0)
    elsewhere = tmp_path / "elsewhere-20260101-000000-abcd"
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text(json.dumps({"id": "link-20260101-000000-abcd", "status": "running"}))
    link = no_spec / "runs" / "link-20260101-000000-abcd"
    os.symlink(elsewhere, link)
    assert main(["runs", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [run_id]
    assert main(["status", link.name]) != 0 and "unknown run" in capsys.readouterr().err
    assert list(_panel(run_id)["listed"]) == [run_id]
    with pytest.raises(rundata.RunNotFound):
        rundata.find_run(clusterview.resolve(None).runs_dirs(), link.name)


def test_a_run_directory_without_its_record_yet_is_pending_in_the_panel_only(no_spec, capsys):
    being_made = no_spec / "runs" / "new-20260101-000000-abcd"
    being_made.mkdir(parents=True)  # create_run made the directory; run.json is not written yet
    assert main(["runs", "--json"]) == 0 and json.loads(capsys.readouterr().out) == []
    listed = _panel(being_made.name)
    assert listed["summary"]["status"] == "pending" and listed["summary"]["attempts"] == 0
    assert listed["listed"][being_made.name]["status"] == "pending"
    with pytest.raises(RunError):
        store.find_run([no_spec], being_made.name)  # the CLI finds only a recorded run
    assert store.find_run([no_spec], being_made.name, pending=True) == being_made


def test_a_damaged_record_is_reported_not_shown_as_pending(no_spec, capsys):
    run_id, run_dir = _run(no_spec, "bad", status="succeeded")
    (run_dir / "run.json").write_text("{not json")
    assert main(["runs"]) == 0 and "damaged" in capsys.readouterr().err
    dirs = clusterview.resolve(None).runs_dirs()
    assert run_id not in {r["id"] for r in rundata.list_runs(dirs)}  # skipped, as `dscluster runs` does
    with pytest.raises(RunError) as err:
        rundata.run_record(rundata.find_run(dirs, run_id))
    assert "damaged" in err.value.message and "move that run directory" in err.value.hint


def test_runs_with_cluster_lists_that_clusters_runs_only(no_spec, dscluster_home, tmp_path, capsys):
    """`dscluster runs --cluster X` shows X's runs, not root's local runs or a stopped simulated cluster's
    beside them; without --cluster every place is listed, as before."""
    spec = tmp_path / "c.toml"
    spec.write_text(f'[cluster]\nname = "pc"\nshared_dir = "{tmp_path / "pc"}"\n[[nodes]]\naddress = "127.0.0.1"\nslots = 1\n')
    theirs, _ = _run(tmp_path / "pc", "theirs", status="succeeded", exit_code=0)
    local, _ = _run(no_spec, "local", status="succeeded", exit_code=0)
    kept, _ = _run(dscluster_home / "sims" / "psim" / "shared", "simrun", status="succeeded", exit_code=0)
    assert main(["runs", "--cluster", str(spec), "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [theirs]
    assert main(["runs", "--cluster", str(spec)]) == 0
    table = capsys.readouterr().out
    assert theirs in table and local not in table and kept not in table
    assert main(["runs", "--json"]) == 0
    assert {r["id"] for r in json.loads(capsys.readouterr().out)} == {local, kept}

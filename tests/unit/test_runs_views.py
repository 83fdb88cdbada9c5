"""`dscluster logs | status | runs | stop` on recorded runs (no processes): filters, formats, next steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from dscluster.cli import main
from dscluster.runs import store


@pytest.fixture
def finished_run(dscluster_home, tmp_path):
    shared = tmp_path / "shared"
    rec = {"id": store.new_run_id("views"), "name": "views", "argv": ["train.py"], "env": {}, "world_size": 2,
           "launch": {"hosts": [["node0", 1], ["node1", 1]]}}
    run_dir = store.create_run(shared, rec)
    rec = store.read_record(run_dir)
    rec.update(status="succeeded", exit_code=0, attempts=[
        {"n": 1, "started": store.now_iso(), "ended": store.now_iso(), "exit_code": 0, "reason": "succeeded",
         "rank_nodes": ["node0", "node1"]}])
    store.write_record(run_dir, rec)
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

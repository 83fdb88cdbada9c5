"""`dscluster status RUN` exits 5 (ExitCode.RUN) for a failed run, 0 otherwise: scripts can write
`dscluster status RUN || alert`; the code is stable and said in `dscluster status --help`."""

from __future__ import annotations

import pytest

from dscluster import cli
from dscluster.errors import ExitCode
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


@pytest.mark.parametrize("status,code", [("failed", ExitCode.RUN), ("succeeded", ExitCode.OK),
                                         ("stopped", ExitCode.OK), ("pending", ExitCode.OK)])
def test_status_exit_code_follows_the_runs_outcome(dscluster_home, tmp_path, capsys, status, code):
    run_dir = store.create_run(tmp_path / "shared", RunRecord.from_json({"id": store.new_run_id("s"), "name": "s", "argv": [],
                                                     "env": {}, "launch": {"args": [], "hosts": []}}))
    store.write_record(run_dir, store.read_record(run_dir).replace(status=status))
    assert cli.main(["status", run_dir.name]) == code
    assert cli.main(["status", run_dir.name, "--json"]) == code
    assert f'"status": "{status}"' in capsys.readouterr().out


def test_the_exit_status_is_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["status", "--help"])
    assert "exit status: 5 when the run failed" in capsys.readouterr().out

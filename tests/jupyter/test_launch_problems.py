"""A launch that meets a person's mistake or their environment answers with the cause and the fix, never an
opaque 500 (the panel) or a raw OSError traceback (the notebook API); and the form's inline DeepSpeed config
goes into the run's own directory, which the launching person writes, not into a shared `<shared>/data`
that may be root's. `<shared>/data` is made a plain file here, so anything written under it fails even for
root (who writes everywhere else), as a person's write fails where root owns the folder."""

from __future__ import annotations

import json
import time

import pytest

FORM = {"script": "-m dscluster.train", "args": "--preset tiny --steps 30 --log-interval 1",
        "config": json.dumps({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1})}
READS_ITS_CONFIG = """import json, sys
path = sys.argv[sys.argv.index("--deepspeed_config") + 1]
print("CONFIG", path, json.load(open(path))["train_micro_batch_size_per_gpu"])
"""


@pytest.fixture(scope="module")
def no_data_folder(lab):
    data = lab.shared / "data"
    if not data.exists():
        data.write_text("a file where the data folder would be\n")
    return lab


def test_the_forms_defaults_are_checked_without_writing_to_shared_data(no_data_folder):
    lab = no_data_folder
    res = lab.api("POST", "validate", FORM)
    assert res.status == 200, res.body
    assert res.json()["ok"] is True


def test_a_missing_script_is_named_not_an_internal_error(no_data_folder):
    res = no_data_folder.api("POST", "runs", {**FORM, "script": "no_such_train.py"})
    assert res.status == 400, res.body
    assert res.json()["setting"] == "script" and "no_such_train.py" in res.json()["message"]


def test_an_unusable_runs_folder_is_named_with_the_fix_in_the_senders_language(no_data_folder):
    lab = no_data_folder
    root = lab.base / "root"
    (root / "train.py").write_text("print('hi')\n")
    runs = lab.shared / "runs"
    moved = lab.shared / "runs.moved"
    if runs.exists():
        runs.rename(moved)
    runs.write_text("a file where the runs folder would be\n")  # no run directory can be made under it
    try:
        for lang, fix in ((None, "check the path"), ("zh-TW", "請檢查路徑")):
            res = lab.api("POST", "runs", {**FORM, "script": "train.py", "nprocs": 1},
                          headers={"X-Dscluster-Lang": lang} if lang else {})
            assert res.status == 409, res.body
            answer = res.json()
            assert answer["error"] == "EnvironmentProblem" and fix in answer["hint"], answer
            assert "Traceback" not in res.body.decode()
    finally:
        runs.unlink()
        if moved.exists():
            moved.rename(runs)


def test_the_notebook_api_writes_the_inline_config_into_the_run_and_names_environment_problems(
        dscluster_home, tmp_path, monkeypatch):
    import dscluster
    from dscluster.errors import DsclusterError

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data").write_text("not a folder\n")
    (tmp_path / "train.py").write_text(READS_ITS_CONFIG)
    run = dscluster.launch("train.py", nprocs=1, cwd=tmp_path, config={"train_micro_batch_size_per_gpu": 3})
    try:
        deadline = time.monotonic() + 300
        while not run.done and time.monotonic() < deadline:
            time.sleep(0.5)
        assert run.status == "succeeded", run.logs(tail=40)
        given = run.path / "ds_config.given.json"  # the config as given; the ranks read the run's copy of it
        assert json.loads(given.read_text())["train_micro_batch_size_per_gpu"] == 3
        assert f"CONFIG {run.path}/" in run.logs(rank=0) and run.logs(rank=0).strip().endswith(" 3")
    finally:
        if not run.done:
            run.stop(timeout=60)
    (tmp_path / "notadir").write_text("")
    monkeypatch.setenv("DSCLUSTER_SHARED", str(tmp_path / "notadir" / "shared"))
    with pytest.raises(DsclusterError) as caught:
        dscluster.launch("train.py", nprocs=1, cwd=tmp_path, config={"train_micro_batch_size_per_gpu": 3})
    assert caught.value.hint and not isinstance(caught.value, OSError)

"""One checkpoint reader (train/checkpoint): the panel's list and `dscluster ckpt` agree on every step,
a damaged committed step included."""

from __future__ import annotations

from dscluster.commands.ckpt import checkpoints as cli_checkpoints
from dscluster.fsutil import atomic_write_json
from dscluster.jupyter import rundata
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


def test_the_panel_and_the_cli_show_the_same_damaged_step(dscluster_home, tmp_path):
    run_dir = store.create_run(tmp_path / "shared", RunRecord.from_json({"id": store.new_run_id("ck"), "name": "ck", "argv": [],
                                                     "env": {}, "launch": {"args": [], "hosts": []}}))
    save = run_dir / "checkpoints"
    for step, size in ((2, 4), (4, 4)):
        ck = save / f"step-{step}"
        ck.mkdir(parents=True)
        (ck / "model.pt").write_bytes(b"abcd")
        atomic_write_json(ck / "COMMIT.json", {"step": step, "files": {"model.pt": size}})
    (save / "step-4" / "model.pt").write_bytes(b"ab")  # a disk fault after the commit
    (save / "step-6").mkdir()  # being written: not committed
    (save / "latest").write_text("step-4")
    panel = rundata.checkpoints(rundata.RunRef(run_dir.name, run_dir))
    cli = cli_checkpoints(save)
    assert [(c["step"], c["committed"], c["latest"]) for c in panel] == [(2, True, False), (4, True, True),
                                                                         (6, False, False)]
    assert [c["damage"] for c in panel if c["committed"]] == [c["damage"] for c in cli]
    assert panel[0]["damage"] is None and "model.pt" in panel[1]["damage"] and panel[2]["damage"] is None

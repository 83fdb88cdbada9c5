"""`dscluster demo --dry-run` prints the launch and starts or prepares nothing: no corpus (22 MB, maybe
on a shared directory not mounted here), no run directory; only the small content-addressed ds_config
that its printed command names."""

from __future__ import annotations

from dscluster.cli import main


def test_demo_dry_run_prepares_no_corpus_and_creates_no_run(dscluster_home, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--dry-run", "--cpu", "--steps", "3"]) == 0
    out = capsys.readouterr().out
    shared = tmp_path / "shared"
    written = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
    assert len(written) == 1 and written[0].startswith("data/ds_configs/demo-"), written
    assert written[0] in out and "deepspeed" in out
    assert not (shared / "runs").exists() or not any((shared / "runs").iterdir())

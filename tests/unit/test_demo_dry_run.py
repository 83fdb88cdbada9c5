"""`dscluster demo --dry-run` prints the launch and starts, prepares or writes nothing: no corpus (22 MB, maybe
on a shared directory not mounted here), no run directory, not even the small content-addressed ds_config that
its printed command names (a real run writes it; the dry run checks the config it would hold)."""

from __future__ import annotations

import re

from dscluster.cli import main


def test_demo_dry_run_prepares_no_corpus_and_creates_no_run(dscluster_home, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--dry-run", "--cpu", "--steps", "3"]) == 0
    out = capsys.readouterr().out
    shared = tmp_path / "shared"
    written = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
    assert written == [], written
    named = re.search(r"\S*data/ds_configs/demo-[0-9a-f]+\.json", out)
    assert named and "deepspeed" in out, out
    assert not (shared / "runs").exists() or not any((shared / "runs").iterdir())


def test_demo_on_cpu_trains_60_steps_unless_told(dscluster_home, tmp_path, monkeypatch, capsys):
    """A newcomer's CPU demo ends within a minute or so of a 2-core machine (the loss falls from about 6 to
    under 3 by step 60); --steps still decides, and a GPU demo keeps 200."""
    from dscluster.commands.demo import DEMO_STEPS

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--dry-run", "--cpu"]) == 0
    assert "--steps 60 " in capsys.readouterr().out
    assert main(["demo", "--dry-run", "--cpu", "--steps", "7"]) == 0
    assert "--steps 7 " in capsys.readouterr().out
    assert DEMO_STEPS == {"cpu": 60, "cuda": 200}

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



def test_the_demo_counts_gpus_as_cuda_reads_cuda_visible_devices():
    """torch's own count, read without its seconds-long import (commands/demo.visible_gpus)."""
    from dscluster.commands.demo import visible_count

    seen = {cvd: visible_count(cvd, 4) for cvd in (None, "", "1,3", "0,1,2,3,4,5", "2,-1,3", "GPU-5e1c,GPU-77aa", "x")}
    assert seen == {None: 4, "": 0, "1,3": 2, "0,1,2,3,4,5": 4, "2,-1,3": 1, "GPU-5e1c,GPU-77aa": 2, "x": 0}
    assert visible_count("0,1", 0) == 2  # nvidia-smi absent: the variable alone


def test_the_demo_command_does_not_import_torch(tmp_path):
    """`dscluster demo` (and `launch` of the reference trainer) leave torch to the ranks: its import costs
    seconds on a GPU host, before any rank starts."""
    import subprocess
    import sys

    code = ("import sys; from dscluster.cli import main; assert main(['demo', '--dry-run']) == 0; "
            "assert main(['launch', '--dry-run', '--local', '1', '-m', 'dscluster.train', '--preset', 'tiny']) == 0; "
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**__import__("os").environ, "DSCLUSTER_HOME": str(tmp_path / "home")})
    assert done.stdout.strip().splitlines()[-1] == "NO-TORCH", done.stdout[-2000:] + done.stderr[-2000:]

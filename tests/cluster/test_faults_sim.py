"""Faults users meet (issue #36) on the simulated cluster, its shared directory on a real small tmpfs that really
fills up: a secret the program prints reaches no file dscluster writes; a full disk ends the run `failed` with
the cause (path, free MiB, the last checkpoint's MiB) and the fix, never restarts into the full disk, keeps
every committed step, and `restart` resumes once space is freed (the pre-flight refuses before that).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from polling import SimCli, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"
SECRET = "hf_Zq8sSECRETvalue4242"
# As in the report: large enough for doctor's pre-flight (1 GiB free on the shared directory) once the
# filler is gone; tmpfs takes memory only for what is written.
TMPFS_MIB = 1280


@pytest.fixture(scope="module")
def tmpfs():
    if os.geteuid() != 0:
        pytest.skip("needs root (mount)")
    where = Path(tempfile.mkdtemp(prefix="dsc-full-", dir="/var/tmp"))
    os.chmod(where, 0o755)
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MIB}m,mode=0755", "tmpfs", str(where)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
        os.rmdir(where)


@pytest.fixture(scope="module")
def sim(sim_cluster, tmpfs):
    return sim_cluster(2, name="faults", shared_dir=tmpfs)


@pytest.fixture(scope="module")
def cli(sim, env):
    return SimCli(sim, env, reads=(*SimCli.READS, "restart"), timeout=300)


def _launched(res: subprocess.CompletedProcess, name: str) -> str:
    assert res.returncode == 0, res.stdout + res.stderr
    return next(w for w in res.stdout.split() if w.startswith(name + "-"))


def _finished(sim, run_id: str, timeout: float = 400) -> dict:
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    rec = wait_for(lambda: (r := store.read_record(run_dir).to_json())["status"] in store.FINISHED and r, timeout)
    if not rec:
        tails = {p.name: p.read_text(errors="replace")[-1500:] for p in (run_dir / "logs").glob("*.log")}
        raise AssertionError(f"{run_id} did not finish: {store.read_record(run_dir).to_json()}\n{tails}")
    return rec


def _files_holding(roots: list[Path], needle: bytes) -> list[str]:
    found = []
    for root in roots:
        for p in root.rglob("*"):
            try:
                if p.is_file() and not p.is_symlink() and needle in p.read_bytes():
                    found.append(str(p))
            except OSError:
                continue
    return found


def test_a_secret_the_program_prints_reaches_no_file_dscluster_writes(sim, cli):
    res = cli("launch", "--cluster", str(sim.spec_path), "--skip-doctor", "--detach", "--name", "leaky",
              "--env", "HF_TOKEN", str(DATA / "leaky_script.py"), extra={"HF_TOKEN": SECRET})
    run_id = _launched(res, "leaky")
    rec = _finished(sim, run_id)
    assert rec["status"] == "succeeded", rec
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    ranks = [p.read_text() for p in sorted((run_dir / "logs").glob("*_rank*.log"))]
    assert len(ranks) == 2 and all("token: *** (printed in two writes)" in t and "HF_TOKEN='***'" in t
                                   for t in ranks), ranks
    logs = cli("logs", run_id)
    assert logs.returncode == 0 and "***" in logs.stdout and SECRET not in logs.stdout
    from dscluster.jupyter import rundata

    ref = rundata.RunRef(run_id, run_dir)
    for item in rundata.log_files(ref):  # the panel's log endpoint reads through these
        assert SECRET not in json.dumps(rundata.log_tail(ref, item["name"]))
    leaks = _files_holding([sim.spec.shared_dir, Path(cli.env["DSCLUSTER_HOME"]), sim.spec.state_dir], SECRET.encode())
    assert not leaks, leaks
    # a piece long enough to be the secret's start never stands alone either
    assert not _files_holding([run_dir], SECRET[:10].encode())


def _fill(tmpfs: Path, leave: int, name: str = "filler.bin") -> Path:
    """A file that fills the tmpfs until `leave` bytes remain free (as another job's output would); called
    again, it grows the same file back to that point."""
    filler = tmpfs / name
    with open(filler, "ab", buffering=0) as f:
        while True:  # the run writes meanwhile: measure again before every piece
            st = os.statvfs(tmpfs)
            left = st.f_bavail * st.f_frsize - leave
            if left <= 0:
                break
            try:
                f.write(bytes(min(left, 256 << 10)))
            except OSError:
                break  # full already
    return filler


def test_a_full_disk_fails_the_run_with_its_cause_and_restart_resumes_once_space_is_freed(sim, cli, tmpfs):
    res = cli("launch", "--cluster", str(sim.spec_path), "--skip-doctor", "--detach", "--name", "full",
              "--max-restarts", "3", str(DATA / "ckpt_user_script.py"), "--steps", "100000", "--save-every", "3",
              # no retention: a step deleted after a commit would give back the room the filler takes
              "--keep", "100000", "--sleep", "0.05")
    run_id = _launched(res, "full")
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    save = run_dir / "checkpoints"
    from dscluster.train import checkpoint as ck

    assert wait_for(lambda: ck.latest_committed(save) is not None, 300), cli("logs", run_id).stdout[-3000:]
    first = ck.latest_committed(save)
    size = sum(ck.read_commit(save / ck.tag_for(first))["files"].values())
    filler = _fill(tmpfs, size // 2)  # half a checkpoint free
    rec = _finished(sim, run_id)
    status = cli("status", run_id, "--json")
    shown = json.loads(status.stdout)
    assert shown["status"] == "failed" and rec["status"] == "failed", (rec, status.stdout)
    exp = shown["explanation"]
    assert exp["signature"] == "disk-full", exp
    assert re.match(r"no space left on device: \S+ \([\d.,]+ MiB free; the last checkpoint took [\d.,]+ MiB\)",
                    exp["cause"]), exp
    assert "--keep" in exp["fix"] and "--save-dir" in exp["fix"] and f"dscluster restart {run_id}" in exp["fix"]
    assert len(rec["attempts"]) == 1, rec["attempts"]  # never restarted into the full disk
    text = cli("status", run_id)
    assert text.returncode == 5 and "no space left on device" in text.stdout, text.stdout
    # Nothing committed is lost or altered; a torn step is never a resume point.
    committed = ck.committed_steps(save)
    assert committed and all(ck.verify(save / ck.tag_for(s)) == [] for s in committed), committed
    newest = committed[-1]
    # The pre-flight refuses a restart while the disk is full, naming both numbers. (The supervisor gave the
    # space it keeps for its last record back when the run ended: the other job fills that too.)
    more = _fill(tmpfs, size // 2, "filler2.bin")
    again = cli("restart", run_id)
    assert again.returncode == 4 and re.search(r"[\d.,]+ MiB free, the last committed checkpoint took [\d.,]+ MiB",
                                               again.stderr), again.stdout + again.stderr
    assert "Traceback" not in again.stderr
    filler.unlink()
    more.unlink()
    again = cli("restart", run_id, extra={})
    assert again.returncode == 0, again.stdout + again.stderr
    new_id = next(w for w in again.stdout.split() if w.startswith("full-") and w != run_id)
    new_dir = store.run_path(sim.spec.shared_dir, new_id)
    assert wait_for(lambda: any(f"resumed from step-{newest}" in p.read_text(errors="replace")
                                for p in (new_dir / "logs").glob("*_rank0.log")), 300), \
        cli("logs", new_id).stdout[-3000:]
    stop = cli("stop", new_id)
    assert stop.returncode == 0, stop.stdout + stop.stderr

"""The line between the node user (every rank, every notebook) and the user who launches a run (root
here): on the simulated 2-node cluster, the node user plants what it can on the shared storage, and
nothing it planted runs or is written as root.

Every plant is made as the node user itself (runuser inside a node), in directories it really owns;
the launches are the real CLI, the real supervisor, DeepSpeed's own runner over pdsh.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from polling import wait_for
from support import run_cli

from dscluster.runs.records import store
from dscluster.runs.records.verify import record_to_act_on
from dscluster.runs.supervising.control import request_stop

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

# The console script, as users run it: `python -m dscluster.cli` would itself put the cwd on sys.path.
DSCLUSTER = shutil.which("dscluster", path=str(Path(sys.executable).parent)) or "dscluster"


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(2, name="secbound")


_PLANT = """
import json, os, sys
job = json.load(sys.stdin)
for path, text in job["files"].items():
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
for path, target in job["symlinks"].items():
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.rename(path, path + ".orig")
    os.symlink(target, path)
"""


def plant(sim, files: dict | None = None, symlinks: dict | None = None) -> None:
    """Write files / plant symlinks (an existing entry is moved aside) as the node user, on node1."""
    job = {"files": {str(k): v for k, v in (files or {}).items()},
           "symlinks": {str(k): str(v) for k, v in (symlinks or {}).items()}}
    res = sim.exec("node1", [sys.executable, "-c", _PLANT], user=sim.spec.ssh_user, input=json.dumps(job),
                   cwd="/", timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def dscluster(sim, env, cwd: Path, *args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    """The venv's `dscluster` script (as the user types it) in `cwd`: support.run_cli."""
    return run_cli(*args, env=env, cwd=cwd, timeout=timeout, entry=(DSCLUSTER,))


def run_id_from(text: str) -> str:
    """A detached launch into a pipe prints the run id alone on its last line; attached, the decorated one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and " " not in lines[-1]:
        return lines[-1]
    for line in text.splitlines():
        if " run " in line and " started on " in line:
            return line.split(" run ", 1)[1].split()[0]
    raise AssertionError(f"no run id in: {text}")


@pytest.fixture(scope="module")
def victim_dir(tmp_path_factory):
    """Files only root may write (0600 in a 0700 directory), with known content."""
    folder = tmp_path_factory.mktemp("root-only")
    os.chmod(folder, 0o700)
    return folder


def make_victim(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text(f"root-only {name}\n")
    path.chmod(0o600)
    return path


def untouched(path: Path) -> bool:
    return path.read_text() == f"root-only {path.name}\n"


def test_module_planted_in_the_launch_directory_never_runs_as_root(sim, env):
    """Attack 1: the node user drops base64.py (DeepSpeed's runner imports base64) into the launch
    directory it owns. The ranks, as the node user, may import it; root's runner and supervisor must not.
    The user's script still runs there, with its sibling module importable."""
    work = Path(sim.spec.shared_dir) / "secwork1"
    planted = f"""
import os, sys, importlib
open(os.path.join({str(work)!r}, f"imported-by-uid-{{os.getuid()}}"), "a").write(" ".join(sys.argv) + "\\n")
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd(), {str(work)!r})]
del sys.modules["base64"]
sys.modules["base64"] = importlib.import_module("base64")  # the real one, for whoever imported this
"""
    plant(sim, files={
        work / "helper.py": 'GREETING = "helper imported"\n',
        work / "train.py": 'import os, helper\nprint(f"[rank {os.environ.get(\'RANK\')}] {helper.GREETING} in {os.getcwd()}", flush=True)\n',
        work / "base64.py": planted,  # records who imported it, then hands over the real base64
    })
    res = dscluster(sim, env, work, "launch", "--cluster", str(sim.spec_path), "--attach", "--skip-doctor",
                    "--max-restarts", "0", "train.py")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    for rank in (0, 1):
        assert f"[rank {rank}] helper imported in {work}" in res.stdout
    assert not (work / "imported-by-uid-0").exists(), (work / "imported-by-uid-0").read_text()


def test_planted_symlinks_in_the_run_directory_are_never_written_through(sim, env, victim_dir):
    """Attack 2 and its kin: while a run's first attempt waits, the node user (who owns the run
    directory) replaces every file the supervisor writes or reads there by a symlink to a root-only file:
    logs/launcher.log, logs/watchdog.log, events.jsonl, run.json, the hostfile copy, ds_env, node_env.sh
    (secret values), `stop`, and a checkpoint's COMMIT.json and `latest`. The first attempt then fails,
    the supervisor logs, records, tears down and starts attempt 2 (writing every file again), which
    succeeds. No root-only file changes, and the run carries on."""
    work = Path(sim.spec.shared_dir) / "secwork2"
    flag = work / "go"
    plant(sim, files={work / "wait.py": f"""import os, sys, time
print("waiting", flush=True)
if os.environ.get("DSCLUSTER_ATTEMPT") == "1":
    while not os.path.exists({str(flag)!r}):
        time.sleep(0.2)
    sys.exit(1)
print("second attempt done", flush=True)
"""})
    res = dscluster(sim, env, work, "launch", "--cluster", str(sim.spec_path), "--detach", "--skip-doctor",
                    "--max-restarts", "1", "--env", "HF_TOKEN=hf_s3cret", "wait.py")
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = run_id_from(res.stdout)
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    logs = run_dir / "logs"
    assert wait_for(lambda: sum("waiting" in p.read_text(errors="replace") for p in logs.glob("*_rank*.log")) == 2,
                    240, 0.5), (logs / "launcher.log").read_text(errors="replace")[-3000:]
    planted = {rel: make_victim(victim_dir, rel.replace("/", "_"))
               for rel in ("logs/launcher.log", "logs/watchdog.log", "events.jsonl", "run.json", "hostfile", "ds_env",
                           "node_env.sh", "checkpoints/step-7/COMMIT.json", "checkpoints/latest")}
    plant(sim, symlinks={run_dir / rel: victim for rel, victim in planted.items()})
    plant(sim, files={flag: ""})
    # The supervisor replaces run.json atomically on its next save: the record becomes readable again.
    def finished():
        try:
            return store.read_record(run_dir).to_json()["status"] in store.FINISHED
        except Exception:  # noqa: BLE001 - still the planted symlink
            return False

    assert wait_for(finished, 240, 0.5), (run_dir / "logs" / "supervisor.log").read_text(errors="replace")[-3000:]
    rec = store.read_record(run_dir).to_json()
    bad = [rel for rel, victim in planted.items() if not untouched(victim)]
    assert not bad, f"written through a planted symlink: {bad}"
    assert rec["status"] == "succeeded" and len(rec["attempts"]) == 2, rec
    launcher = logs / "launcher.log"
    assert not launcher.is_symlink() and "attempt 2" in launcher.read_text(errors="replace")
    # the supervisor saves the finished record, then appends its "finished" event: wait for that too
    wait_for(lambda: [e["event"] for e in store.read_events(run_dir)][-1:] == ["finished"], 60, 0.5)
    events = [e["event"] for e in store.read_events(run_dir)]
    assert "restart" in events and events[-1] == "finished", events
    assert (run_dir / "hostfile").read_text() == "node0 slots=1\nnode1 slots=1\n"
    assert not (run_dir / "node_env.sh").is_symlink()  # written fresh for attempt 2, then removed
    # (the node user's own copies aside: it moved node_env.sh to node_env.sh.orig, as it may: it is theirs)
    assert not [p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink() and p.suffix != ".orig"
                and b"hf_s3cret" in p.read_bytes()]

    # `dscluster stop` (root) writes `stop` into the run dir: a planted symlink is replaced, not followed.
    stop_victim = make_victim(victim_dir, "stop")
    plant(sim, symlinks={run_dir / "stop": stop_victim})
    request_stop(run_dir, record_to_act_on(run_dir))
    assert untouched(stop_victim) and not (run_dir / "stop").is_symlink()

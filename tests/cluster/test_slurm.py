"""Supervised runs through a real Slurm on the simulated 3-node cluster (root: namespaces, munged,
slurmctld on node0, one slurmd per node; DeepSpeed's own Slurm launcher starts the ranks with srun).

What Slurm says (squeue, scontrol) is read with Slurm's own clients, and the ranks' processes are
read in each node's own process table.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from polling import SimCli, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"
SCRIPT = str(DATA / "min_ds_script.py")
TRAIN = ["--log-interval", "1", "--eval-interval", "0", "--sample-tokens", "8", "--seq-len", "64"]


@pytest.fixture(scope="module")
def sim(sim_cluster):
    if not all(Path(p).exists() for p in ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged")):
        pytest.skip("needs slurm-wlm and munge (scripts/setup.sh test installs them)")
    return sim_cluster(3, name="slurmt", slurm=True)


@pytest.fixture(scope="module")
def env(env, sim):
    """conftest's, with the simulated Slurm's configuration and none of this process's other SLURM_*."""
    e = dict(env)
    e["SLURM_CONF"] = sim.state["slurm"]["conf"]
    for k in list(e):
        if k.startswith("SLURM_") and k != "SLURM_CONF":
            del e[k]
    return e


def slurm(env, *argv: str, user: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    prefix = ["runuser", "-u", user, "--", "env", f"SLURM_CONF={env['SLURM_CONF']}"] if user else []
    return subprocess.run(prefix + list(argv), env=env, capture_output=True, text=True, timeout=timeout)


class Cli(SimCli):
    """conftest's `cli` (polling.SimCli): restart reads a run too, and a launch names the sim's spec."""

    def __init__(self, sim, env):
        super().__init__(sim, env, reads=(*SimCli.READS, "restart"))

    def args(self, *args: str) -> tuple[str, ...]:
        if args and args[0] == "launch":  # the sim's spec: runs go to its shared directory
            return (args[0], "--cluster", str(self.sim.spec_path), *args[1:])
        return super().args(*args)

    def run_dir(self, run_id: str) -> Path:
        return store.run_path(self.sim.spec.shared_dir, run_id)

    def record(self, run_id: str) -> dict:
        return store.read_record(self.run_dir(run_id)).to_json()

    def finished(self, run_id: str, timeout: float = 400) -> dict:
        rec = wait_for(lambda: self.record(run_id)["status"] in store.FINISHED and self.record(run_id), timeout, 1)
        assert rec, self("status", run_id).stdout + self("logs", run_id).stdout[-3000:]
        return rec

    def node_pids(self, run_id: str) -> dict[str, list[int]]:
        out = {}
        for node in self.sim.nodes:
            res = self.sim.exec(node, [sys.executable, "-m", "dscluster.runs.supervising.reaper", run_id, "--list"], timeout=30)
            out[node] = [int(p) for p in res.stdout.split()]
        return out


def run_id_of(text: str) -> str:
    """A detached launch into a pipe prints the run id alone on its own line (the decorated line goes to
    stderr); --sbatch and attached launches print "run ID started on/submitted as ..."."""
    for line in text.splitlines():
        if re.fullmatch(r"[A-Za-z0-9][\w.-]*-\d{8}-\d{6}-[0-9a-f]{4}", line.strip()):
            return line.strip()
        if " run " in line and (" started on " in line or " submitted as " in line):
            return line.split(" run ", 1)[1].split()[0]
    raise AssertionError(f"no run id in: {text}")


@pytest.fixture(scope="module")
def cli(sim, env):
    return Cli(sim, env)


@pytest.fixture(scope="module")
def trainer(sim):
    from dscluster.data.corpus import ensure_stdlib_corpus

    shared = Path(sim.spec.shared_dir)
    data, _ = ensure_stdlib_corpus(shared)
    cfg = shared / "sl_ds_config.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
                               "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
                               "zero_optimization": {"stage": 1}, "steps_per_print": 1000000}))
    return ["-m", "dscluster.train", "--data", str(data), *TRAIN, "--deepspeed", "--deepspeed_config", str(cfg)]


def job_state(env, job: str) -> str:
    res = slurm(env, "scontrol", "show", "job", "-o", job)
    return next((w.split("=", 1)[1] for w in res.stdout.split() if w.startswith("JobState=")), "")


def test_the_simulated_slurm_is_real(sim, env):
    res = slurm(env, "sinfo", "-h", "-N", "-o", "%N %t %P")
    assert sorted(res.stdout.split("\n")[:3]) == ["node0 idle sim*", "node1 idle sim*", "node2 idle sim*"], res
    res = slurm(env, "srun", "-N3", "-n3", "hostname", user=sim.spec.ssh_user)
    assert sorted(res.stdout.split()) == ["node0", "node1", "node2"], res.stderr


def test_a_three_node_run_through_srun_succeeds_and_gives_its_allocation_back(cli, env):
    res = cli("launch", "--launcher", "slurm", "--nodes", "3", "--attach", "--max-restarts", "0",
              SCRIPT, "--steps", "3")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_of(res.stdout)
    rec = cli.record(run_id)
    assert rec["status"] == "succeeded" and rec["world_size"] == 3, rec
    assert rec["slurm"]["own_job"] and rec["slurm"]["nodes"] == ["node0", "node1", "node2"]
    logs = cli.run_dir(run_id) / "logs"
    for r, node in enumerate(["node0", "node1", "node2"]):
        text = (logs / f"min_ds_script_rank{r}.log").read_text()
        assert f"on {node} run {run_id}" in text and "step 2 loss" in text, text
    # The run asked for its allocation, so it gave it back.
    assert wait_for(lambda: job_state(env, rec["slurm"]["job_id"]) in ("COMPLETED", "CANCELLED", ""), 20)
    shown = cli("status", run_id).stdout
    assert f"job {rec['slurm']['job_id']}" in shown, shown


def test_inside_an_existing_allocation_the_run_uses_it_and_leaves_it_to_its_owner(cli, env):
    res = slurm(env, "salloc", "--no-shell", "-N", "2", "-J", "mine", timeout=60)
    job = next(w for w in res.stderr.split() if w.isdigit())
    try:
        nodelist = next(w.split("=", 1)[1] for w in slurm(env, "scontrol", "show", "job", "-o", job).stdout.split()
                        if w.startswith("NodeList="))
        inside = Cli(cli.sim, {**env, "SLURM_JOB_ID": job, "SLURM_JOB_NODELIST": nodelist})
        res = inside("launch", "--launcher", "slurm", "--attach", "--max-restarts", "0", SCRIPT, "--steps", "2")
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr
        rec = cli.record(run_id_of(res.stdout))
        assert rec["status"] == "succeeded" and rec["world_size"] == 2
        assert rec["slurm"]["job_id"] == job and not rec["slurm"]["own_job"]
        assert job_state(env, job) == "RUNNING"  # the allocation is its owner's, still there
    finally:
        slurm(env, "scancel", job)


def test_a_killed_rank_restarts_inside_the_same_allocation_from_the_last_checkpoint(cli, sim, env, trainer):
    res = cli("launch", "--launcher", "slurm", "--nodes", "3", "--detach", "--max-restarts", "1",
              "--name", "slkill", *trainer, "--steps", "24", "--save-interval", "4", "--step-sleep", "0.3")
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = run_id_of(res.stdout)
    assert wait_for(lambda: (cli.record(run_id).get("last_checkpoint_step") or 0) >= 8, 300), \
        cli("logs", run_id).stdout[-3000:]
    job = cli.record(run_id)["slurm"]["job_id"]
    pids = cli.node_pids(run_id)["node2"]
    assert pids, cli.node_pids(run_id)
    sim.exec("node2", ["kill", "-9", *map(str, pids)])
    rec = cli.finished(run_id)
    assert rec["status"] == "succeeded", cli("status", run_id).stdout
    assert len(rec["attempts"]) == 2 and "node2" in (rec["attempts"][0]["reason"] or ""), rec["attempts"]
    assert rec["slurm"]["job_id"] == job  # one allocation for both attempts
    events = store.read_events(cli.run_dir(run_id))
    assert [e["job_id"] for e in events if e["event"] == "slurm-allocation"] == [job]
    restart = next(e for e in events if e["event"] == "restart")
    assert restart["from_step"] >= 8
    rank0 = "".join(p.read_text() for p in (cli.run_dir(run_id) / "logs").glob("*_rank0.log"))
    assert f"resumed from step-{restart['from_step']}" in rank0
    assert not any(cli.node_pids(run_id).values())


def test_stopping_one_users_run_leaves_another_users_job_running(cli, sim, env):
    other = subprocess.Popen(["runuser", "-u", sim.spec.ssh_user, "--", "env", f"SLURM_CONF={env['SLURM_CONF']}",
                              "srun", "-N3", "-n3", "-J", "someone-else", "sleep", "300"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert wait_for(lambda: "someone-else RUNNING" in slurm(env, "squeue", "-h", "-o", "%j %T").stdout, 30)
        res = cli("launch", "--launcher", "slurm", "--nodes", "3", "--detach", "--name", "slstop",
                  SCRIPT, "--steps", "1000", "--sleep", "0.2")
        assert res.returncode == 0, res.stdout + res.stderr
        run_id = run_id_of(res.stdout)
        assert wait_for(lambda: "step 3 " in "".join(
            p.read_text() for p in (cli.run_dir(run_id) / "logs").glob("*_rank0.log")), 120), \
            cli("logs", run_id).stdout[-3000:]
        job = cli.record(run_id)["slurm"]["job_id"]
        assert cli("stop", run_id).returncode == 0
        rec = cli.finished(run_id, 60)
        assert rec["status"] == "stopped"
        assert wait_for(lambda: job_state(env, job) in ("CANCELLED", "COMPLETED", ""), 20)
        assert not any(cli.node_pids(run_id).values())
        queue = slurm(env, "squeue", "-h", "-o", "%j %T %u").stdout
        assert f"someone-else RUNNING {sim.spec.ssh_user}" in queue, queue
        assert other.poll() is None
    finally:
        other.terminate()
        other.wait(30)


def test_a_batch_job_at_its_time_limit_is_recorded_and_a_resubmission_resumes(cli, env, trainer):
    res = cli("launch", "--sbatch", "--nodes", "3", "--time", "0:45", "--detach", "--name", "sltime", *trainer,
              "--steps", "100000", "--save-interval", "3", "--step-sleep", "0.3")
    assert res.returncode == 0, res.stdout + res.stderr
    # Into a pipe (run=$(dscluster launch --sbatch ...)), as every detached launch: the run id alone on stdout.
    run_id = res.stdout.strip()
    assert run_id == run_id_of(res.stdout) and "submitted as Slurm job" in res.stderr, res.stdout + res.stderr
    run_dir = cli.run_dir(run_id)
    # The script and the supervisor's hand-off live where only the submitter can write, not in the run
    # dir (the node user's): the hand-off is read once and removed when the job's supervisor starts.
    private = Path(env["DSCLUSTER_HOME"]) / "slurm-jobs" / run_id
    assert (private / "job.sbatch").is_file() and not (run_dir / "job.sbatch").exists()
    assert oct(private.stat().st_mode & 0o777) == "0o700"
    rec = cli.finished(run_id, 240)
    assert not (private / "handoff.json").exists()
    assert rec["status"] == "failed", rec
    assert rec["explanation"]["signature"] == "slurm-timeout", rec["explanation"]
    assert rec["slurm"]["state"] == "TIMEOUT" and rec["attempts"][-1]["reason"] == "time limit"
    step = rec["last_checkpoint_step"]
    assert step and step >= 3
    assert wait_for(lambda: job_state(env, rec["slurm"]["job_id"]) == "TIMEOUT", 30)  # after COMPLETING
    shown = cli("status", run_id).stdout
    assert "TIMEOUT" in shown and "dscluster restart" in shown, shown
    # Resubmitted: a new batch job that resumes from the last committed step.
    res = cli("restart", run_id)
    assert res.returncode == 0, res.stdout + res.stderr
    new_id = next(w for w in res.stdout.split() if w.startswith("sltime-") and w != run_id)
    assert wait_for(lambda: f"resumed from step-{step}" in "".join(
        p.read_text() for p in (cli.run_dir(new_id) / "logs").glob("*_rank0.log")), 180), \
        cli("logs", new_id).stdout[-3000:]
    assert cli("stop", new_id).returncode == 0
    assert cli.finished(new_id, 60)["status"] == "stopped"


def test_doctor_checks_the_slurm_side(cli, env):
    res = cli("doctor", "--slurm", "--nodes", "3", "-v")
    assert res.returncode == 0, res.stdout + res.stderr
    for node in ("node0", "node1", "node2"):
        assert any(line.startswith(node) and "munge" in line for line in res.stdout.splitlines()), res.stdout
    res = cli("doctor", "--slurm", "--nodes", "3", "--gpus-per-node", "1", "--json")
    assert res.returncode == 4
    gres = [r for r in json.loads(res.stdout) if r["check"] == "gres"]
    assert len(gres) == 3 and all(r["status"] == "fail" for r in gres)
    res = cli("doctor", "--slurm", "--nodes", "4")
    assert res.returncode == 4 and "the run asks for 4" in res.stdout


def test_sim_down_stops_slurm_by_pid_and_removes_its_state(sim_cluster):
    small = sim_cluster(1, name="slurmdown", slurm=True)
    pids = [p for p in small.state["slurm"]["pids"].values()]
    conf = Path(small.state["slurm"]["conf"])
    assert conf.is_file()
    from dscluster.sim import down

    down(small.name, purge=True)  # the name as made (a DSCLUSTER_SIM_SALT suffix included)
    from dscluster.sim.procs import alive

    assert not any(alive(p) for p in pids)
    assert not conf.parent.exists()
    leftover = subprocess.run(["pgrep", "-f", str(conf)], capture_output=True, text=True).stdout.split()
    assert leftover == [], leftover

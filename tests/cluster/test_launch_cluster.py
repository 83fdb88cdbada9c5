"""Supervised launches on the simulated 3-node cluster (root: network namespaces, real sshd, pdsh,
OpenMPI, MPICH, DeepSpeed's own launcher, gloo on CPU). One cluster for the whole module.

Every "nothing is left" assertion reads each node's own process table (inside its PID namespace)
for processes carrying the run's DSCLUSTER_RUN_ID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from polling import SimCli, run_masters, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"
SCRIPT = str(DATA / "min_ds_script.py")


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="h4launch")


class Cli(SimCli):
    """conftest's `cli` (polling.SimCli), with the launches, records and processes these tests read."""

    def launch(self, *args: str, doctor: bool = False) -> str:
        """A detached launch. Fault tests skip doctor's pre-flight (tested on its own below): right after a
        healed partition its short waits can trip on a loaded 2-core machine."""
        res = self("launch", "--cluster", str(self.sim.spec_path), "--detach",
                   *([] if doctor else ["--skip-doctor"]), *args)
        assert res.returncode == 0, res.stdout + res.stderr
        return run_id_from(res.stdout)

    def run_dir(self, run_id: str) -> Path:
        return store.run_path(self.sim.spec.shared_dir, run_id)

    def record(self, run_id: str) -> dict:
        return store.read_record(self.run_dir(run_id)).to_json()

    def node_pids(self, run_id: str, upto: int | None = None) -> dict[str, list[int]]:
        """The run's processes as each node's own process table shows them (nsenter, not ssh); with `upto`,
        those of attempts up to it only (the next attempt's pre-warmed launcher, started 15 s into an
        attempt, rightly outlives its teardown)."""
        out = {}
        for node in self.sim.nodes:
            if not self.sim.is_running(node):
                out[node] = []
                continue
            res = self.sim.exec(node, [sys.executable, "-m", "dscluster.runs.supervising.reaper", run_id, "--list",
                                       *(["--upto", str(upto)] if upto is not None else [])], timeout=30)
            out[node] = [int(p) for p in res.stdout.split()]
        return out


def run_id_from(text: str) -> str:
    """A detached launch into a pipe prints the run id alone on stdout (the decorated line goes to stderr)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and " " not in lines[-1].strip():
        return lines[-1].strip()
    for line in lines:
        if " run " in line and " started on " in line:
            return line.split(" run ", 1)[1].split()[0]
    raise AssertionError(f"no run id in: {text}")


def rank_lines(cli: Cli, run_id: str, rank: int) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((cli.run_dir(run_id) / "logs").glob(f"*_rank{rank}.log")))


def wait_training(cli: Cli, run_id: str, timeout: float = 300, mpi: bool = False) -> None:
    if mpi:  # mpirun has no per-rank log files: every rank's output is in launcher.log
        launcher = cli.run_dir(run_id) / "logs" / "launcher.log"
        ok = wait_for(lambda: launcher.exists() and launcher.read_text(errors="replace").count("step 1 ") >= 3,
                      timeout, 0.5)
    else:
        ok = wait_for(lambda: all("step 1 " in rank_lines(cli, run_id, r) for r in range(3)), timeout, 0.5)
    assert ok, cli("logs", run_id).stdout[-3000:]


def all_gone(cli: Cli, run_id: str) -> bool:
    return not any(cli.node_pids(run_id).values())


@pytest.fixture(scope="module")
def cli(sim, env):
    return Cli(sim, env)


def test_user_script_runs_to_completion_with_pdsh(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--attach", "--max-restarts", "0",
              "--env", "HF_TOKEN=hf_s3cret", SCRIPT, "--steps", "3")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_from(res.stdout)
    for r, node in enumerate(["node0", "node1", "node2"]):
        assert f"[{node} {r}] step 2 loss" in res.stdout
    rec = cli.record(run_id)
    assert rec["status"] == "succeeded" and rec["exit_code"] == 0 and rec["world_size"] == 3
    assert rec["attempts"][0]["rank_nodes"] == ["node0", "node1", "node2"]
    run_dir = cli.run_dir(run_id)
    assert (run_dir / "hostfile").read_text() == "node0 slots=1\nnode1 slots=1\nnode2 slots=1\n"
    env_lines = (run_dir / "ds_env").read_text().splitlines()
    assert all(line and not line.startswith("#") for line in env_lines)
    assert any(line.startswith("PATH=" + str(Path(sys.executable).parent)) for line in env_lines)
    assert "hf_s3cret" not in (run_dir / "run.json").read_text() + (run_dir / "ds_env").read_text()
    assert "hf_s3cret" not in (run_dir / "logs" / "launcher.log").read_text()  # never on pdsh's command line
    assert all(f"[{node} {r}] HF_TOKEN has 9 characters" in res.stdout for r, node in enumerate(["node0", "node1"]))
    # Delivered through node_env.sh for the attempt only: once the run ended the value is nowhere on disk.
    assert not [p for p in run_dir.rglob("*") if p.is_file() and b"hf_s3cret" in p.read_bytes()]
    assert all_gone(cli, run_id)
    logs = cli("logs", run_id, "--node", "node1").stdout
    assert "[node1 1] step 2 loss" in logs and "[node0" not in logs and "[launcher]" not in logs
    assert "[node2 2] done" in cli("logs", run_id, "--rank", "2").stdout
    listing = cli("runs")
    assert run_id in listing.stdout and "succeeded" in listing.stdout


def test_openmpi_launcher(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--launcher", "openmpi", "--attach",
              "--max-restarts", "0", SCRIPT, "--steps", "3")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_from(res.stdout)
    assert res.stdout.count("step 2 loss") >= 3
    assert "--allow-run-as-root" in (cli.run_dir(run_id) / "logs" / "launcher.log").read_text()
    assert cli.record(run_id)["status"] == "succeeded"
    assert all_gone(cli, run_id)
    # Plain DeepSpeed leaves mpirun, the orteds and every rank running when its runner gets SIGTERM.
    run_id = cli.launch("--launcher", "openmpi", "--max-restarts", "0", "--name", "mpistop", SCRIPT,
                        "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id, mpi=True)
    assert cli("stop", run_id).returncode == 0
    assert cli.record(run_id)["status"] == "stopped"
    assert all_gone(cli, run_id), cli.node_pids(run_id)
    # The orteds carry no run marker; they exit once mpirun (killed by the teardown) is gone.
    orted = lambda: [cli.sim.exec(n, ["pgrep", "-u", cli.sim.spec.ssh_user, "orted"]).stdout.split()  # noqa: E731
                     for n in cli.sim.nodes]
    assert wait_for(lambda: not any(orted()), 15, 0.5), orted()


def test_bad_input_is_refused_before_anything_starts(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "no_such_script.py")
    assert res.returncode == 3 and "does not exist" in res.stderr and "fix" in res.stderr
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "-m", "no_such_module_xyz")
    assert res.returncode == 3 and "cannot be imported" in res.stderr
    bad_cfg = Path(cli.cwd) / "h4_bad_ds_config.json"
    bad_cfg.write_text(json.dumps({"train_batch_size": 7, "train_micro_batch_size_per_gpu": 2,
                                   "gradient_accumulation_steps": 1}))
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", SCRIPT, "--deepspeed_config", str(bad_cfg))
    assert res.returncode == 3 and "train_batch_size" in res.stderr and "fix" in res.stderr
    # An unreachable node: doctor's pre-flight refuses before anything starts on any node.
    cli.sim.partition("node2")
    try:
        res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "--name", "unreach", SCRIPT)
    finally:
        cli.sim.heal("node2")
    assert res.returncode == 4 and "node2" in res.stderr and "fix" in res.stderr
    runs = cli.sim.spec.shared_dir / "runs"
    assert not list(runs.glob("no_such*")) and not list(runs.glob("unreach*"))


def test_partition_is_detected_torn_down_and_reported_within_60s(cli, sim):
    run_id = cli.launch("--max-restarts", "0", "--name", "part", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    sim.partition("node1")
    t0 = time.monotonic()
    try:
        rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 60)
        reported = time.monotonic() - t0
        assert rec, "not reported within 60 s"
        assert rec["status"] == "failed" and rec["exit_code"] != 0
        assert rec["explanation"]["signature"] == "node-lost" and "node1" in rec["attempts"][-1]["reason"]
        teardown = next(e for e in store.read_events(cli.run_dir(run_id)) if e["event"] == "teardown")
        assert teardown["unreachable"] == ["node1"], teardown  # the node that was cut off
        # the partitioned node's own watchdog reaps its ranks when the pings stop
        assert wait_for(lambda: all_gone(cli, run_id), 30), cli.node_pids(run_id)
        print(f"partition: reported after {reported:.1f}s, all gone after {time.monotonic() - t0:.1f}s")
    finally:
        sim.heal("node1")


def test_crashed_node_is_detected_and_reported(cli, sim):
    run_id = cli.launch("--max-restarts", "0", "--name", "crash", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    sim.crash("node2")
    t0 = time.monotonic()
    try:
        rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 60)
        assert rec, "not reported within 60 s"
        assert rec["status"] == "failed"
        assert wait_for(lambda: all_gone(cli, run_id), 15), cli.node_pids(run_id)
        status = cli("status", run_id, "--json")
        view = json.loads(status.stdout)
        assert view["explanation"]["cause"] and view["explanation"]["fix"]
        print(f"crash: reported after {time.monotonic() - t0:.1f}s ({view['explanation']['signature']})")
    finally:
        sim.heal("node2")


def test_pdsh_killed_by_a_signal_is_not_reported_as_success(cli):
    """DeepSpeed's runner exits 0 when pdsh dies by a signal; the run must still say failed."""
    from dscluster.runs.supervising.reaper import run_pids

    run_id = cli.launch("--max-restarts", "0", "--name", "falseok", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    pdsh = [p for p in run_pids(run_id) if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0] == b"pdsh"]
    assert len(pdsh) == 1
    os.kill(pdsh[0], signal.SIGTERM)
    rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 60)
    assert rec and rec["status"] == "failed" and rec["exit_code"] != 0, rec
    assert "exited 0" in rec["attempts"][-1]["reason"]
    assert wait_for(lambda: all_gone(cli, run_id), 15), cli.node_pids(run_id)


def test_supervisor_sigkill_leaves_no_rank_anywhere(cli):
    run_id = cli.launch("--max-restarts", "0", "--name", "orphan", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    assert all(cli.node_pids(run_id).values())
    os.kill(cli.record(run_id)["supervisor_pid"], signal.SIGKILL)
    t0 = time.monotonic()
    assert wait_for(lambda: all_gone(cli, run_id), 30), cli.node_pids(run_id)
    print(f"supervisor SIGKILL: every rank gone after {time.monotonic() - t0:.1f}s")
    assert json.loads(cli("status", run_id, "--json").stdout)["status"] == "lost"
    assert cli("stop", run_id).returncode == 0


def _terminal_signals() -> None:
    """SIGINT as a terminal's shell leaves it for a foreground command: default. A suite started in the
    background by a non-interactive shell (`.ci/run &`) inherits SIGINT ignored, and so would the launch."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_stop_and_ctrl_c_leave_a_concurrent_run_alone(cli):
    # Three runs on the same nodes at once: --share-gpus, else the second would be refused (GPU leases).
    keep = cli.launch("--share-gpus", "--max-restarts", "0", "--name", "keep", SCRIPT, "--steps", "1000",
                      "--sleep", "0.2")
    attached = subprocess.Popen(cli.argv("launch", "--cluster", str(cli.sim.spec_path), "--attach", "--share-gpus",
                                         "--max-restarts", "0", "--name", "ctrlc", SCRIPT, "--steps", "1000",
                                         "--sleep", "0.2"),
                                env=cli.env, cwd=cli.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, preexec_fn=_terminal_signals)
    first = attached.stdout.readline()
    ctrlc = run_id_from(first)
    stopped = cli.launch("--share-gpus", "--max-restarts", "0", "--name", "stopme", SCRIPT, "--steps", "1000",
                         "--sleep", "0.2")
    for rid in (keep, ctrlc, stopped):
        wait_training(cli, rid)
    # Ctrl-C in the terminal: SIGINT to the foreground process group of the attached launch.
    os.killpg(attached.pid, signal.SIGINT)
    out, _ = attached.communicate(timeout=90)
    assert attached.returncode == 130, out[-3000:]
    res = cli("stop", stopped)
    assert res.returncode == 0 and "stopped" in res.stdout
    for rid in (ctrlc, stopped):
        assert cli.record(rid)["status"] == "stopped"
        assert all_gone(cli, rid), (rid, cli.node_pids(rid))
    # The concurrent run never noticed.
    assert cli.record(keep)["status"] == "running"
    assert all(cli.node_pids(keep).values())
    before = rank_lines(cli, keep, 0).count("step ")
    assert wait_for(lambda: rank_lines(cli, keep, 0).count("step ") > before + 3, 30)
    assert cli("stop", keep).returncode == 0
    assert all_gone(cli, keep)


# ---- the reference trainer -------------------------------------------------------------------------
TRAIN_COMMON = ["--log-interval", "1", "--eval-interval", "0", "--sample-tokens", "8", "--seq-len", "64"]


@pytest.fixture(scope="module")
def trainer_inputs(sim):
    """The stdlib corpus and a ds_config on the cluster's shared storage (readable by the node user)."""
    from dscluster.data.corpus import ensure_stdlib_corpus

    shared = Path(sim.spec.shared_dir)
    data, _ = ensure_stdlib_corpus(shared)
    cfg = shared / "h4_ds_config.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
                               "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
                               "zero_optimization": {"stage": 1}, "steps_per_print": 1000000}))
    for path in [data, *data.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return ["--data", str(data), *TRAIN_COMMON], str(cfg)


def metric_lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x.strip()]


def test_reference_trainer_completes_with_a_complete_run_dir(cli, trainer_inputs):
    args, cfg = trainer_inputs
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--attach", "--max-restarts", "0", "--name", "ref",
              "-m", "dscluster.train", *args, "--steps", "6", "--save-interval", "3",
              "--deepspeed", "--deepspeed_config", cfg)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_from(res.stdout)
    run_dir = cli.run_dir(run_id)
    rec = cli.record(run_id)
    assert rec["status"] == "succeeded" and rec["last_checkpoint_step"] == 6
    assert rec["ds_config"]["train_batch_size"] == 12  # resolved for the real world size 3
    assert rec["argv"][:2] == ["-m", "dscluster.train"]
    lines = metric_lines(run_dir)
    assert [m["step"] for m in lines if "loss" in m and "event" not in m] == [1, 2, 3, 4, 5, 6]
    assert lines[-1]["event"] == "done"
    assert (run_dir / "checkpoints" / "step-6" / "COMMIT.json").is_file()
    assert [c["step"] for c in json.loads(cli("ckpt", run_id, "--json").stdout)] == [3, 6]
    assert {e["event"] for e in store.read_events(run_dir)} >= {"launched", "finished"}
    assert len(list((run_dir / "logs").glob("*_rank*.log"))) == 3
    assert all_gone(cli, run_id)


def test_killed_rank_tears_down_everywhere_and_restarts_from_the_last_checkpoint(cli, sim, trainer_inputs):
    args, cfg = trainer_inputs
    steps = 30
    run_id = cli.launch("--max-restarts", "1", "--name", "killrank", "-m", "dscluster.train", *args,
                        "--steps", str(steps), "--save-interval", "4", "--step-sleep", "0.3",
                        "--deepspeed", "--deepspeed_config", cfg)
    run_dir = cli.run_dir(run_id)
    assert wait_for(lambda: (cli.record(run_id).get("last_checkpoint_step") or 0) >= 8, 300), cli("logs", run_id).stdout[-3000:]
    first = cli.record(run_id)["attempts"][0]["n"]
    before = cli.node_pids(run_id, upto=first)
    listing = sim.exec("node2", ["sh", "-c", "for p in " + " ".join(map(str, before["node2"])) +
                                 "; do echo $p $(tr '\\0' ' ' < /proc/$p/cmdline); done"]).stdout
    rank_pid = next(int(line.split()[0]) for line in listing.splitlines()
                    if "dscluster.train" in line and "deepspeed.launcher" not in line)
    sim.exec("node2", ["kill", "-9", str(rank_pid)])
    t_kill = time.time()
    # every process of the first attempt, on every node, is gone within 10 s
    old = {n: set(p) for n, p in before.items()}
    gone = wait_for(lambda: not any(old[n] & set(p) for n, p in cli.node_pids(run_id).items()), 10, 0.2)
    assert gone, (old, cli.node_pids(run_id))
    print(f"rank SIGKILL -> first attempt gone on every node after {time.time() - t_kill:.1f}s")
    rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 400, 1)
    assert rec and rec["status"] == "succeeded", cli("status", run_id).stdout
    assert len(rec["attempts"]) == 2 and rec["attempts"][0]["reason"]
    events = store.read_events(run_dir)
    teardown = next(e for e in events if e["event"] == "teardown")
    assert teardown["t"] - t_kill < 10
    restart = next(e for e in events if e["event"] == "restart")
    resumed_from = restart["from_step"]
    assert resumed_from and resumed_from >= 8
    assert f"resumed from step-{resumed_from}" in (run_dir / "logs" / "launcher.log").read_text() + \
        "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank0.log"))
    # The loss sequence continues: attempt 2 starts right after the checkpoint and replays the same losses.
    train = [m for m in metric_lines(run_dir) if "loss" in m and "event" not in m]
    # Attempt 2 wrote the last steps - resumed_from records. (When the kill lands right after a save,
    # attempt 1 logged nothing past the checkpoint and no step is replayed.)
    first, second = train[:-(steps - resumed_from)], train[-(steps - resumed_from):]
    assert [m["step"] for m in second] == list(range(resumed_from + 1, steps + 1))
    assert first and first[-1]["step"] >= resumed_from
    by_step = {m["step"]: m["loss"] for m in first}
    for m in second:
        if m["step"] in by_step:
            assert m["loss"] == pytest.approx(by_step[m["step"]], rel=1e-4, abs=1e-5)
    assert all_gone(cli, run_id)


def test_mpich_runs_the_demo_trainer_and_restarts_a_killed_rank_from_its_checkpoint(cli, sim, trainer_inputs):
    """MPICH's Hydra beside Open MPI: doctor checks its programs on the nodes, every rank runs through the
    backend's shim, a rank killed on node2 is reported with its node, the attempt is torn down everywhere
    and the run resumes once from its last checkpoint; the secret reaches the ranks by name only."""
    args, cfg = trainer_inputs
    steps = 8
    run_id = cli.launch("--launcher", "mpich", "--max-restarts", "1", "--name", "mpichkill", "--env", "HF_TOKEN=hf_s3cret",
                        "-m", "dscluster.train", *args, "--steps", str(steps), "--save-interval", "3",
                        "--step-sleep", "0.3", "--deepspeed", "--deepspeed_config", cfg, doctor=True)
    run_dir = cli.run_dir(run_id)
    assert wait_for(lambda: (cli.record(run_id).get("last_checkpoint_step") or 0) >= 3, 300), \
        cli("logs", run_id).stdout[-3000:]
    pids = " ".join(map(str, cli.node_pids(run_id)["node2"]))
    listing = sim.exec("node2", ["sh", "-c", f"for p in {pids}; do echo $p $(tr '\\0' ' ' < /proc/$p/cmdline); done"]).stdout
    rank_pid = next(int(line.split()[0]) for line in listing.splitlines() if " -m dscluster.train " in line)
    sim.exec("node2", ["kill", "-9", str(rank_pid)])
    rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 300, 1)
    assert rec and rec["status"] == "succeeded", cli("status", run_id).stdout
    assert len(rec["attempts"]) == 2 and rec["attempts"][0]["reason"]
    restart = next(e for e in store.read_events(run_dir) if e["event"] == "restart")
    assert restart["from_step"] >= 3
    train = [m["step"] for m in metric_lines(run_dir) if "loss" in m and "event" not in m]
    assert train[-(steps - restart["from_step"]):] == list(range(restart["from_step"] + 1, steps + 1))
    log = (run_dir / "logs" / "launcher.log").read_text()
    assert "node2: rank 2: exits with return code = -9" in log and "-genvlist HF_TOKEN" in log
    assert log.count("exits successfully") >= 3 and "hf_s3cret" not in log
    assert all_gone(cli, run_id), cli.node_pids(run_id)
    # Hydra's proxies carry no run marker; they exit once their ranks and mpirun are gone.
    proxies = lambda: [cli.sim.exec(n, ["pgrep", "-u", cli.sim.spec.ssh_user, "hydra_pmi_proxy"]).stdout.split()  # noqa: E731
                       for n in cli.sim.nodes]
    assert wait_for(lambda: not any(proxies()), 15, 0.5), proxies()


def test_a_crashed_node_is_waited_for_and_the_run_resumes_from_its_checkpoint_once_healed(cli, sim, trainer_inputs):
    args, cfg = trainer_inputs
    run_id = cli.launch("--max-restarts", "2", "--restart-wait", "120", "--name", "crashheal", "-m", "dscluster.train",
                        *args, "--steps", "16", "--save-interval", "4", "--step-sleep", "0.3",
                        "--deepspeed", "--deepspeed_config", cfg)
    run_dir = cli.run_dir(run_id)
    assert wait_for(lambda: (cli.record(run_id).get("last_checkpoint_step") or 0) >= 4, 300), \
        cli("logs", run_id).stdout[-3000:]
    sim.crash("node1")
    try:
        waiting = wait_for(lambda: [e for e in store.read_events(run_dir) if e["event"] == "waiting"], 60)
        assert waiting and waiting[0]["nodes"] == ["node1"], store.read_events(run_dir)
        assert cli.record(run_id)["status"] == "restarting" and len(cli.record(run_id)["attempts"]) == 1
        assert "waiting for node1 to come back" in cli("status", run_id).stdout
        time.sleep(3)  # the node stays down a while: no restart is spent meanwhile
        assert len(cli.record(run_id)["attempts"]) == 1
    finally:
        sim.heal("node1")
    rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 400, 1)
    assert rec and rec["status"] == "succeeded", cli("status", run_id).stdout
    assert len(rec["attempts"]) == 2
    restart = next(e for e in store.read_events(run_dir) if e["event"] == "restart")
    assert restart["from_step"] and restart["from_step"] >= 4
    assert "waiting for node1 to come back" in (run_dir / "logs" / "launcher.log").read_text()
    assert f"resumed from step-{restart['from_step']}" in "".join(
        p.read_text() for p in (run_dir / "logs").glob("*_rank0.log"))
    assert all_gone(cli, run_id)


def test_a_node_that_stays_down_fails_the_run_with_the_heal_command_as_the_fix(cli, sim):
    run_id = cli.launch("--max-restarts", "2", "--restart-wait", "4", "--name", "staydown", SCRIPT,
                        "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    sim.crash("node2")
    try:
        rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 120)
        assert rec and rec["status"] == "failed", rec
        assert len(rec["attempts"]) == 1  # no restart spent against a node that is down
        exp = rec["explanation"]
        assert exp["signature"] == "node-down" and "node2" in exp["cause"]
        assert f"dscluster sim heal --name {sim.name} node2" in exp["fix"]
        status = cli("status", run_id)
        assert "dscluster sim heal" in status.stdout
    finally:
        sim.heal("node2")


def test_a_hostfile_run_is_stopped_from_anywhere_after_its_hostfile_is_edited(cli, sim):
    # Launched as the recipe does (a hostfile beside the user's code, the spec from $DSCLUSTER_CLUSTER);
    # then the hostfile is edited and the supervisor dies: `stop` from another directory, without that
    # variable, must still reach and clean every node the run started on (the spec recorded at launch).
    work = Path(sim.spec.shared_dir) / "r13-work"
    work.mkdir(exist_ok=True)
    os.chmod(work, 0o755)
    hostfile = work / "hostfile"
    hostfile.write_text("".join(f"{node} slots=1\n" for node in sim.nodes))
    res = subprocess.run(cli.argv("launch", "--hostfile", "hostfile", "--detach", "--skip-doctor", "--max-restarts",
                                  "0", "--name", "edited", SCRIPT, "--steps", "1000", "--sleep", "0.2"),
                         env={**cli.env, "DSCLUSTER_CLUSTER": str(sim.spec_path)}, cwd=work, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = run_id_from(res.stdout)
    wait_training(cli, run_id)
    hostfile.write_text(f"{sim.nodes[0]} slots=1\n")
    os.kill(cli.record(run_id)["supervisor_pid"], signal.SIGKILL)
    assert run_masters(run_id)  # the run's own ssh masters (runs/supervising/masters.py) outlive a killed supervisor
    stop = cli("stop", run_id)
    assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stdout + stop.stderr
    assert cli.record(run_id)["status"] == "stopped"
    assert wait_for(lambda: all_gone(cli, run_id), 20), cli.node_pids(run_id)
    assert wait_for(lambda: not run_masters(run_id), 20), run_masters(run_id)  # ...until stop ends them

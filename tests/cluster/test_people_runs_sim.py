"""Two people on one simulated cluster (root: network namespaces, sshd, pdsh, real OS accounts): each made with
`dscluster user add`, each launching as themselves with the cluster spec the hub hands their JupyterLab
(<shared>/.dscluster/dscluster.toml) and no other setting. A person's run reaches the nodes as them, with the
cluster key `user add` made for them: its supervisor and every rank run under their own UID. The other
person sees the run, cannot stop it, cannot write into it, and their launch on the same GPUs waits until
it ends. The cluster key of the node user opens no person's account. Runs are a tiny script that waits for
a file (no torch); every run and account a test makes is gone at teardown, pass or fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from polling import wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

TAG = f"{os.getpid() % 100000:05d}"
ALICE, BOB = f"ppl{TAG}a", f"ppl{TAG}b"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"

SCRIPT = (Path(__file__).resolve().parents[1] / "data" / "wait_for_file.py").read_text()


def _uid_of_pid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def _is_rank_of(proc: Path, run_id: str) -> bool:
    """A rank process of the run: the script, with the run's release file as its argument."""
    try:
        cmdline = (proc / "cmdline").read_bytes()
    except OSError:
        return False
    return b"ppl_wait.py" in cmdline and f"ppl-{run_id.split('-')[0]}.release".encode() in cmdline


class Team:
    def __init__(self, sim, home: Path):
        self.sim, self.shared, self.home = sim, Path(sim.spec.shared_dir), home
        self.root_env = {**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}
        for k in ("DSCLUSTER_SHARED", "DSCLUSTER_CLUSTER"):
            self.root_env.pop(k, None)
        self.script = self.shared / "ppl_wait.py"
        self.script.write_text(SCRIPT)
        self.script.chmod(0o644)
        self.started: list[str] = []

    def root(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=self.root_env, cwd=str(self.shared),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def person_env(self, name: str) -> dict[str, str]:
        """What the hub gives a person's JupyterLab (hub.py): their HOME, the published spec, nothing else
        of dscluster's (no DSCLUSTER_HOME: their own ~/.dscluster)."""
        entry = pwd.getpwnam(name)
        return {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": entry.pw_dir,
                "USER": name, "LOGNAME": name, "LANG": "C.UTF-8", "DSCLUSTER_LANG": "en",
                "DSCLUSTER_CLUSTER": str(self.shared / ".dscluster" / "dscluster.toml")}

    def as_(self, name: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        argv = [RUNUSER, "-u", name, "--", sys.executable, "-m", "dscluster.cli", *args]
        return subprocess.run(argv, env=self.person_env(name), cwd=str(self.shared / "users" / name),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def launch(self, name: str, run_name: str, *extra: str) -> subprocess.CompletedProcess:
        res = self.as_(name, "launch", "--detach", "--skip-doctor", "--max-restarts", "0", "--name", run_name, *extra,
                       str(self.script), str(self.release_path(run_name)))
        if res.returncode == 0:
            self.started.append(res.stdout.strip().splitlines()[-1])
        return res

    def release_path(self, run_name: str) -> Path:
        return self.shared / f"ppl-{run_name}.release"

    def release(self, run_name: str) -> None:
        self.release_path(run_name).write_text("")

    def run_dir(self, run_id: str) -> Path:
        return store.run_path(self.shared, run_id)

    def record(self, run_id: str):
        return store.read_record(self.run_dir(run_id))

    def why(self, run_id: str) -> str:
        """The record and the logs' tails, for a failed assertion."""
        tails = {p.name: p.read_text(errors="replace")[-1500:] for p in (self.run_dir(run_id) / "logs").glob("*.log")}
        return f"{self.record(run_id)}\n{tails}"

    def rank_lines(self, run_id: str) -> list[str]:
        return [line for p in sorted((self.run_dir(run_id) / "logs").glob("*rank*.log"))
                for line in p.read_text(errors="replace").splitlines() if " waits for " in line]


@pytest.fixture(scope="module")
def team(sim_cluster):
    sim = sim_cluster(2, name="h33ppl")
    home = Path(tempfile.mkdtemp(prefix="dsc-ppl-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    t = Team(sim, home)
    spec = str(sim.spec_path)
    # The README's order: root's demo first (an older dscluster's, or one before `sim up` made them) left runs/
    # and data/ root's 0755, where no person could make a run; `user add` makes them right.
    for folder in (t.shared / "runs", t.shared / "data"):
        folder.mkdir(exist_ok=True)
        folder.chmod(0o755)
    try:
        for name in (ALICE, BOB):
            added = t.root("user", "add", name, "--cluster", spec)
            assert added.returncode == 0, added.stdout + added.stderr
        yield t
    finally:
        for run_id in t.started:  # pass or fail: no run outlives the tests
            t.root("stop", "--cluster", spec, run_id, "--timeout", "20")
        for name in (ALICE, BOB):
            if t.root("user", "remove", name, "--cluster", spec).returncode != 0:
                subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)


def test_a_persons_run_runs_as_them_everywhere_and_the_other_cannot_touch_it(team):
    alice, bob = pwd.getpwnam(ALICE), pwd.getpwnam(BOB)
    # their cluster key: theirs, private, and its public half in root's key file of the nodes' sshd
    key = Path(alice.pw_dir) / ".dscluster" / "clusters" / team.sim.spec.name / "id_ed25519"
    st = key.stat()
    assert st.st_uid == alice.pw_uid and st.st_mode & 0o077 == 0
    keys_file = Path("/etc/dscluster/keys") / ALICE
    assert keys_file.stat().st_uid == 0 and key.with_suffix(".pub").read_text().split()[1] in keys_file.read_text()

    first = team.launch(ALICE, "alicerun")
    assert first.returncode == 0, first.stdout + first.stderr
    a = team.started[-1]
    assert wait_for(lambda: team.record(a).status == "running", 180), team.why(a)
    rec = team.record(a)
    assert rec.owner == ALICE
    assert _uid_of_pid(int(rec.supervisor_pid)) == alice.pw_uid
    # every rank, on both nodes, under alice's UID
    lines = wait_for(lambda: len(team.rank_lines(a)) >= 2 and team.rank_lines(a), 120)
    assert lines and all(f" uid {alice.pw_uid} " in line for line in lines), (lines, team.why(a))
    assert {line.split()[1] for line in lines} == {"0", "1"}, lines

    # bob sees it, cannot stop it, cannot write into it, and his launch on the same GPUs is refused...
    listed = team.as_(BOB, "runs")
    assert listed.returncode == 0 and a in listed.stdout and ALICE in listed.stdout, listed.stdout + listed.stderr
    refused_stop = team.as_(BOB, "stop", a)
    assert refused_stop.returncode == 7 and ALICE in refused_stop.stderr, refused_stop.stdout + refused_stop.stderr
    planted = subprocess.run(["runuser", "-u", BOB, "--", "sh", "-c", 'echo x > "$1"', "sh",
                              str(team.run_dir(a) / "logs" / "planted.log")], capture_output=True, text=True)
    assert planted.returncode != 0 and not (team.run_dir(a) / "logs" / "planted.log").exists()
    # the node user (it owns the shared dir) cannot rename or replace her run directory: runs/ is root's, sticky
    node_user = team.sim.spec.ssh_user
    moved = subprocess.run([RUNUSER, "-u", node_user, "--", "mv", str(team.run_dir(a)), str(team.shared / "runs" / "x")],
                           capture_output=True, text=True, timeout=60)
    assert moved.returncode != 0 and team.run_dir(a).is_dir() and team.run_dir(a).stat().st_uid == alice.pw_uid
    # ... nor read alice's cluster key, nor signal her supervisor or ranks (the privilege probes, between people)
    def as_bob(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([RUNUSER, "-u", BOB, "--", *argv], capture_output=True, text=True, timeout=60)

    assert as_bob("cat", str(key)).returncode != 0
    ranks = [int(p.name) for p in Path("/proc").glob("[0-9]*") if _is_rank_of(p, a)]
    assert ranks and all(_uid_of_pid(pid) == alice.pw_uid for pid in ranks), ranks
    for pid in [int(rec.supervisor_pid), *ranks]:
        killed = as_bob("kill", "-TERM", str(pid))
        assert killed.returncode != 0 and "not permitted" in killed.stderr, (pid, killed.stderr)
    assert team.record(a).status == "running"
    refused = team.launch(BOB, "bobrun")
    assert refused.returncode == 8, refused.stdout + refused.stderr
    assert a in refused.stderr and ALICE in refused.stderr
    # ... or waits with --wait, and runs as bob once alice's run ends
    queued = team.launch(BOB, "bobrun", "--wait")
    assert queued.returncode == 0, queued.stdout + queued.stderr
    b = team.started[-1]
    assert team.record(b).status == "queued" and team.record(b).owner == BOB
    team.release("alicerun")
    assert wait_for(lambda: team.record(a).status == "succeeded", 180), team.why(a)
    assert wait_for(lambda: team.record(b).status == "running", 240), team.why(b)
    lines = wait_for(lambda: len(team.rank_lines(b)) >= 2 and team.rank_lines(b), 120)
    assert lines and all(f" uid {bob.pw_uid} " in line for line in lines), (lines, team.why(b))
    team.release("bobrun")
    assert wait_for(lambda: team.record(b).status == "succeeded", 180), team.why(b)


def test_the_node_users_cluster_key_opens_no_persons_account(team):
    # the spec's node user (root's cluster key) tries to log in to node1 as alice: sshd reads alice's keys
    # only from root's file, which holds her keys, not the cluster's
    spec = team.sim.spec
    node = spec.nodes[1]
    state = Path(spec.state_dir)
    res = subprocess.run(["ssh", "-F", str(state / "ssh_config"), "-o", f"User={ALICE}", "-p", str(node.ssh_port),
                          node.address, "id -u"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert res.returncode == 255 and "Permission denied" in res.stderr, res.stdout + res.stderr

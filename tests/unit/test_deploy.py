"""`docker run` builder (each option) and `up`/`down` orchestration with fake hosts (unit level)."""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

import pytest

from dscluster.cluster.runner import CommandResult
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.deploy import dockerrun, hosts, up
from dscluster.deploy.dockerrun import DeployOptions, docker_run_argv
from dscluster.deploy.policy import _SECRET_NAME
from dscluster.errors import ClusterError, ConfigError

SPEC = ClusterSpec(name="lab", shared_dir=Path("/shared/lab"), ssh_user="dscluster", ssh_port=2222,
                   nodes=(NodeSpec("10.0.0.1", 8, "gpu1", 2222), NodeSpec("10.0.0.2", 8, "gpu2", 2222),
                          NodeSpec("10.0.0.3", 8, "gpu3", 2300)))
MASTER, WORKER, WORKER3 = SPEC.nodes
PUBKEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFake dscluster-lab"
PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAFAKEFAKEFAKE\n-----END OPENSSH PRIVATE KEY-----\n"


def _flag(argv: list[str], flag: str) -> list[str]:
    """Values of a docker option (before the image and the node start arguments)."""
    docker_part = argv[:argv.index("--shared") - 1] if "--shared" in argv else argv
    return [docker_part[i + 1] for i, a in enumerate(docker_part) if a == flag]


# --- the docker run builder, option by option ----------------------------------------------------------

def test_defaults():
    argv = docker_run_argv(SPEC, MASTER, DeployOptions())
    assert argv[:3] == ["docker", "run", "--detach"]
    assert _flag(argv, "--name") == ["dscluster-lab"]
    assert _flag(argv, "--network") == ["host"]
    assert _flag(argv, "--gpus") == ["all"]
    assert _flag(argv, "--shm-size") == ["16g"] and "--ipc" not in argv
    assert _flag(argv, "--ulimit") == ["memlock=-1", "stack=67108864"]
    assert _flag(argv, "--restart") == ["unless-stopped"]
    assert _flag(argv, "--security-opt") == ["no-new-privileges"]
    assert "--device" not in argv and "--privileged" not in argv


def test_shared_dir_is_mounted_at_the_same_path_and_host_key_persists():
    argv = docker_run_argv(SPEC, WORKER, DeployOptions())
    assert "/shared/lab:/shared/lab" in _flag(argv, "--volume")
    assert f"dscluster-lab-node:{dockerrun.AGENT_STATE_DIR}" in _flag(argv, "--volume")


def test_image_then_node_start_args_master_first():
    opts = DeployOptions(image="registry.local/dscluster-node:0.1.0")
    master = docker_run_argv(SPEC, MASTER, opts)
    i = master.index("registry.local/dscluster-node:0.1.0")
    assert master[i + 1:] == ["--shared", "/shared/lab", "--user", "dscluster", "--port", "2222", "--role", "master",
                              "--name", "gpu1", "--state-dir", dockerrun.AGENT_STATE_DIR, "--people", "--lab",
                              "--identity", "/run/secrets/dscluster/id_ed25519"]
    worker = docker_run_argv(SPEC, WORKER3, opts)
    tail = worker[worker.index(opts.image) + 1:]
    assert tail[tail.index("--role") + 1] == "worker" and "--lab" not in tail and "--identity" not in tail
    assert tail[tail.index("--port") + 1] == "2300"  # the node's own port from the spec
    assert "DSCLUSTER_SSH_PORT=2300" in _flag(worker, "--env")  # the healthcheck reads it
    assert _flag(master, "--label") == ["io.dscluster.cluster=lab", "io.dscluster.role=master"]


def test_every_node_container_reads_roots_people_records_read_only_and_makes_their_accounts():
    """The people's keys and UIDs are the host root's (`user add` writes them there): read-only inside, where
    the node user (and every rank) cannot change who may log in as whom; the agent makes the accounts."""
    for node in (MASTER, WORKER, WORKER3):
        argv = docker_run_argv(SPEC, node, DeployOptions())
        assert "/etc/dscluster:/etc/dscluster:ro" in _flag(argv, "--volume")
        assert "--people" in argv[argv.index(DeployOptions().image) + 1:]
    master = docker_run_argv(SPEC, MASTER, DeployOptions())
    assert f"DSCLUSTER_HUB_HOME={dockerrun.AGENT_STATE_DIR}/hub" in _flag(master, "--env")  # kept by down/up


def test_no_lab():
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(lab=False))
    assert "--lab" not in argv


def test_hub_on_the_master_only():
    assert "--hub" not in docker_run_argv(SPEC, MASTER, DeployOptions())
    assert "--hub" in docker_run_argv(SPEC, MASTER, DeployOptions(hub=True))
    assert "--hub" not in docker_run_argv(SPEC, WORKER3, DeployOptions(hub=True))


def test_master_identity_is_a_read_only_volume_and_stored_through_stdin():
    master = docker_run_argv(SPEC, MASTER, DeployOptions())
    assert "dscluster-lab-identity:/run/secrets/dscluster:ro" in _flag(master, "--volume")
    assert not any("identity" in v for v in _flag(docker_run_argv(SPEC, WORKER, DeployOptions()), "--volume"))
    off = docker_run_argv(SPEC, MASTER, DeployOptions(master_identity=False))
    assert "--identity" not in off and not any("identity" in v for v in _flag(off, "--volume"))
    store = dockerrun.identity_store_argv(SPEC, DeployOptions())
    assert store[:4] == ["docker", "run", "--rm", "--interactive"] and "none" in store  # no network
    assert "umask 077" in store[-1] and "cat >" in store[-1]


@pytest.mark.parametrize("gpus,expected", [("all", ["--gpus", "all"]), ("none", []),
                                           ("0,1", ["--gpus", '"device=0,1"']),
                                           ("GPU-3f0a-11", ["--gpus", '"device=GPU-3f0a-11"'])])
def test_gpus(gpus, expected):
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(gpus=gpus).validate())
    got = argv[argv.index("--gpus"):argv.index("--gpus") + 2] if "--gpus" in argv else []
    assert got == expected
    assert not any("CUDA_VISIBLE_DEVICES" in a for a in argv)


def test_ipc_host_replaces_shm_size():
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(ipc_host=True))
    assert _flag(argv, "--ipc") == ["host"] and "--shm-size" not in argv
    assert _flag(docker_run_argv(SPEC, MASTER, DeployOptions(shm_size="64g")), "--shm-size") == ["64g"]


@pytest.mark.parametrize("mode,host_has_ib,expected", [("auto", True, True), ("auto", False, False),
                                                       ("yes", False, True), ("no", True, False)])
def test_infiniband(mode, host_has_ib, expected):
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(infiniband=mode), has_infiniband=host_has_ib)
    assert (_flag(argv, "--device") == ["/dev/infiniband"]) is expected


def test_language_and_agent_user():
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(lang="zh_TW"))
    assert "DSCLUSTER_LANG=zh_TW" in _flag(argv, "--env")
    assert not any(a.startswith("DSCLUSTER_LANG") for a in _flag(docker_run_argv(SPEC, MASTER, DeployOptions()),
                                                                  "--env"))
    assert _flag(argv, "--user") == ["0"]  # sshd only; the image's USER stays the non-root node user


def test_no_secret_ever_in_the_command():
    argv = docker_run_argv(SPEC, MASTER, DeployOptions(lang="zh_TW"))
    for env in _flag(argv, "--env"):
        assert not _SECRET_NAME.search(env.split("=")[0]), env
    with pytest.raises(ConfigError):
        DeployOptions(extra_env=(("HF_TOKEN", "x"),)).validate()


@pytest.mark.parametrize("field,value,setting", [("image", "Bad Image", "image"), ("gpus", "some", "gpus"),
                                                 ("shm_size", "lots", "shm_size"), ("infiniband", "maybe", "infiniband")])
def test_bad_options_name_the_setting(field, value, setting):
    with pytest.raises(ConfigError) as err:
        DeployOptions(**{field: value}).validate()
    assert err.value.setting == setting and err.value.hint


def test_stop_rm_volume():
    assert dockerrun.docker_stop_argv(SPEC) == ["docker", "stop", "--time", "20", "dscluster-lab"]
    assert dockerrun.docker_rm_argv(SPEC, force=True) == ["docker", "rm", "--force", "dscluster-lab"]
    assert dockerrun.docker_volume_rm_argv(SPEC) == ["docker", "volume", "rm", "dscluster-lab-node"]


# --- the operator's ssh -------------------------------------------------------------------------------

def test_host_runner_uses_batch_mode_and_quotes_each_word():
    ssh = hosts.HostSSHRunner("10.0.0.1", user="ops")
    argv = ssh.ssh_argv(["sh", "-c", "echo 'a b'; echo $HOME", "x"])
    assert argv[:5] == ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
    assert argv[5:8] == ["-l", "ops", "10.0.0.1"] and argv[8] == "--"
    assert shlex.split(argv[9]) == ["sh", "-c", "echo 'a b'; echo $HOME", "x"]
    assert not any("StrictHostKeyChecking" in a for a in argv)  # the operator's own trust settings apply


def test_preflight_script_runs_and_reports_real_facts(tmp_path):
    """The script itself, run locally by sh: the shared dir and a busy port are seen."""
    import socket
    import subprocess

    spec = ClusterSpec(name="t", shared_dir=tmp_path, ssh_user="dscluster", nodes=(NodeSpec("127.0.0.1", 1, "n0"),))
    (tmp_path / ".dscluster").mkdir()
    (tmp_path / ".dscluster" / "cluster.pub").write_text(PUBKEY)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        node = NodeSpec("127.0.0.1", 1, "n0", busy.getsockname()[1])
        argv = hosts.preflight_argv(spec, node, DeployOptions(lab=False))
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    facts = hosts.parse_facts(CommandResult("127.0.0.1", tuple(argv), out.returncode, out.stdout, out.stderr))
    assert facts.reachable and facts.shared_dir and facts.cluster_pub
    assert facts.busy_ports == (node.ssh_port,)


# --- up / down with fake hosts -------------------------------------------------------------------------

HEALTHY = ("docker=27.3.1\ngpu_toolkit=yes\ncontainer=\nimage_user=dscluster\ngpus=8\nshared_dir=yes\n"
           "cluster_pub=yes\npreflight=done\n")


class FakeHost:
    """One host: answers the preflight from `facts`, keeps a container set, records every command."""

    def __init__(self, node: NodeSpec, world: FakeWorld, facts: str = HEALTHY, run_fails: str = "",
                 sshd_starts: bool = True, reachable: bool = True):
        self.node, self.world, self.facts = node.address, world, facts
        self.run_fails, self.sshd_starts, self.reachable = run_fails, sshd_starts, reachable
        self.containers: set[str] = set()
        self.calls: list[list[str]] = []

    def run(self, argv, *, env=None, input=None, timeout=30, cwd=None) -> CommandResult:
        argv = list(argv)
        self.calls.append(argv)
        ok = lambda out="": CommandResult(self.node, tuple(argv), 0, out, "")  # noqa: E731
        fail = lambda err, rc=1: CommandResult(self.node, tuple(argv), rc, "", err)  # noqa: E731
        if not self.reachable:
            return fail("ssh: connect to host 10.0.0.9 port 22: Connection timed out", 255)
        if argv[:2] == ["sh", "-c"] and argv[3] == "dscluster-preflight":
            return ok(self.facts)
        if argv[:2] == ["sh", "-c"] and argv[3] == "dscluster-publish":
            self.world.shared[argv[4]] = input
            return ok()
        if argv[0] == "cat":
            content = self.world.shared.get(argv[1]) if self.world.shares(self.node) else None
            return ok(content) if content else fail("cat: No such file or directory")
        if argv[:3] == ["docker", "run", "--rm"]:  # the identity store: the key arrives on stdin
            self.world.identity[self.node] = input
            return ok()
        if argv[:2] == ["docker", "run"]:
            if self.run_fails:
                return fail(self.run_fails, 125)
            self.containers.add(argv[argv.index("--name") + 1])
            return ok("c0ffee\n")
        if argv[:2] == ["sh", "-c"] and argv[3] == "dscluster-port":
            return ok() if self.containers and self.sshd_starts else fail("")
        if argv[:2] == ["docker", "logs"]:
            return ok("error: no cluster public key at /shared/lab/.dscluster/cluster.pub\n")
        if argv[:2] == ["docker", "exec"] and argv[-1].endswith("ssh_host_ed25519_key.pub"):
            # The node's own host key, read as root in its container over the operator's ssh.
            return ok(f"ssh-ed25519 AAAAhost{self.node.replace('.', '')} dscluster-host\n")
        if argv[:2] in (["docker", "stop"], ["docker", "rm"]):
            name = argv[-1]
            if name not in self.containers:
                return fail(f"Error response from daemon: No such container: {name}")
            if argv[1] == "rm":
                self.containers.discard(name)
            return ok(name)
        if argv[:3] == ["docker", "volume", "rm"]:
            if argv[3].endswith("-identity"):
                self.world.identity.pop(self.node, None)
            return ok()
        raise AssertionError(f"unexpected command {argv}")


class FakeWorld:
    def __init__(self, spec: ClusterSpec = SPEC, **per_host):
        self.shared: dict[str, str] = {}
        self.identity: dict[str, str] = {}  # host -> private key stored in its identity volume
        self.not_sharing: set[str] = set()
        self.lock = threading.Lock()
        self.hosts = {n.name: FakeHost(n, self, **per_host.get(n.name, {})) for n in spec.nodes}

    def shares(self, address: str) -> bool:
        return address not in self.not_sharing

    def runner_for(self, node: NodeSpec) -> FakeHost:
        return self.hosts[node.name]

    def docker_runs(self) -> list[str]:
        return [name for name, h in self.hosts.items()
                if any(c[:2] == ["docker", "run"] and "--rm" not in c for c in h.calls)]

    def all_calls(self) -> list[list[str]]:
        return [c for h in self.hosts.values() for c in h.calls]


def _up(world: FakeWorld, opts: DeployOptions | None = None):
    return up.up(SPEC, opts or DeployOptions(), world.runner_for, PUBKEY, identity_key=PRIVATE, verify_timeout=0.5,
                 sleep=lambda s: None)


def test_up_starts_every_host_and_publishes_the_key():
    world = FakeWorld()
    report = _up(world)
    assert report.ok and report.started == ["gpu1", "gpu2", "gpu3"]
    assert all(h.containers == {"dscluster-lab"} for h in world.hosts.values())
    assert world.shared["/shared/lab/.dscluster/cluster.pub"] == PUBKEY + "\n"
    # The spec, for the master's node user; without the controller's own paths.
    published = world.shared["/shared/lab/.dscluster/dscluster.toml"]
    assert 'name = "lab"' in published and "state_dir" not in published and "gpu3" in published
    master_run = next(c for c in world.hosts["gpu1"].calls if c[:2] == ["docker", "run"] and "--rm" not in c)
    assert "--lab" in master_run and "master" in master_run
    # The private key reached only the master, only through stdin: no argv anywhere holds it.
    assert world.identity == {"10.0.0.1": PRIVATE}
    assert not any("PRIVATE KEY" in " ".join(c) or "FAKEFAKE" in " ".join(c) for c in world.all_calls())
    # Host keys pinned from the nodes themselves, never from the records on the shared storage.
    from dscluster.cluster.ssh import read_known_hosts

    assert read_known_hosts(SPEC) == {"gpu1": "ssh-ed25519 AAAAhost10001", "gpu2": "ssh-ed25519 AAAAhost10002",
                                      "gpu3": "ssh-ed25519 AAAAhost10003"}


@pytest.mark.parametrize("host_setup,needle,fix_needle", [
    ({"facts": HEALTHY.replace("docker=27.3.1", "docker_error=Cannot connect to the Docker daemon at "
                                                "unix:///var/run/docker.sock. Is the docker daemon running?")},
     "not running", "systemctl start docker"),
    ({"facts": HEALTHY.replace("docker=27.3.1", "docker_error=permission denied while trying to connect")},
     "refuses your user", "docker group"),
    ({"facts": HEALTHY.replace("gpus=8", "gpus=0")}, "no GPUs", "--gpus none"),
    ({"facts": HEALTHY.replace("gpus=8\n", "")}, "nvidia-smi is missing", "NVIDIA driver"),
    ({"facts": HEALTHY.replace("gpus=8", "gpus=4")}, "4 GPUs but the spec gives it slots = 8", "slots = 4"),
    ({"facts": HEALTHY.replace("gpu_toolkit=yes\n", "")}, "NVIDIA Container Toolkit", "nvidia-ctk"),
    ({"facts": HEALTHY.replace("shared_dir=yes\n", "")}, "/shared/lab does not exist on 10.0.0.2", "mount"),
    ({"facts": HEALTHY + "busy_port=2222\n"}, "port 2222 is already in use on 10.0.0.2", "ss -ltnp"),
    ({"facts": HEALTHY.replace("container=", "container=running")}, "already exists", "dscluster down"),
    ({"facts": HEALTHY.replace("image_user=dscluster\n", "")}, "is not on 10.0.0.2", "docker pull"),
    ({"facts": HEALTHY.replace("image_user=dscluster", "image_user=")}, "runs as root", "node image"),
    ({"facts": HEALTHY.replace("image_user=dscluster", "image_user=trainer")}, "image's user is trainer",
     'ssh_user = "trainer"'),
    ({"reachable": False}, "cannot reach 10.0.0.2 over ssh", "without a password prompt"),
])
def test_preflight_problem_names_the_host_and_fix_and_starts_nothing(host_setup, needle, fix_needle):
    world = FakeWorld(gpu2=host_setup)
    with pytest.raises(up.UpFailed) as err:
        _up(world)
    problems = err.value.report.problems
    assert [p.node for p in problems] == ["gpu2"], problems
    assert needle in problems[0].what and fix_needle in problems[0].fix, problems[0]
    assert world.docker_runs() == [] and world.shared == {} and world.identity == {}  # nothing touched anywhere
    assert "nothing was started" in err.value.message


def test_cpu_only_cluster_skips_gpu_checks():
    world = FakeWorld(**{n.name: {"facts": HEALTHY.replace("gpus=8\n", "").replace("gpu_toolkit=yes\n", "")}
                         for n in SPEC.nodes})
    report = _up(world, DeployOptions(gpus="none"))
    assert report.ok
    assert all("--gpus" not in c for h in world.hosts.values() for c in h.calls if c[:2] == ["docker", "run"])


def test_all_problems_are_reported_together():
    world = FakeWorld(gpu1={"facts": HEALTHY + "busy_port=8888\n"}, gpu3={"reachable": False})
    with pytest.raises(up.UpFailed) as err:
        _up(world)
    assert sorted(p.node for p in err.value.report.problems) == ["gpu1", "gpu3"]
    assert "8888" in err.value.report.problems[0].what  # the master's lab port is checked too


def test_unshared_storage_is_caught_before_starting():
    world = FakeWorld()
    world.not_sharing.add("10.0.0.3")
    with pytest.raises(up.UpFailed) as err:
        _up(world)
    assert [p.node for p in err.value.report.problems] == ["gpu3"]
    assert "not the same storage" in err.value.report.problems[0].what
    assert world.docker_runs() == []


def test_failed_start_rolls_back_the_started_hosts():
    world = FakeWorld(gpu3={"run_fails": "docker: Error response from daemon: could not select device driver "
                                         "\"\" with capabilities: [[gpu]]."})
    with pytest.raises(up.UpFailed) as err:
        _up(world)
    report = err.value.report
    assert [p.node for p in report.failed] == ["gpu3"] and "could not select device driver" in report.failed[0].what
    assert sorted(report.started) == ["gpu1", "gpu2"] and sorted(report.rolled_back) == ["gpu1", "gpu2"]
    assert all(not h.containers for h in world.hosts.values())
    assert world.identity == {}  # the master's copy of the key went with the rollback
    assert "removed again" in err.value.message


def test_agent_that_never_listens_is_rolled_back_with_its_log():
    world = FakeWorld(gpu2={"sshd_starts": False})
    with pytest.raises(up.UpFailed) as err:
        _up(world)
    report = err.value.report
    assert [p.node for p in report.failed] == ["gpu2"]
    assert "no cluster public key" in report.failed[0].what  # the container's own log, shown to the user
    assert sorted(report.rolled_back) == ["gpu1", "gpu2", "gpu3"]
    assert all(not h.containers for h in world.hosts.values())


def test_down_removes_everywhere_and_tolerates_absent_containers():
    world = FakeWorld()
    _up(world)
    world.hosts["gpu2"].containers.clear()  # someone removed it by hand
    results = up.down(SPEC, world.runner_for, purge=True)
    assert [(r.node, r.state) for r in results] == [("gpu1", "removed"), ("gpu2", "absent"), ("gpu3", "removed")]
    assert all(not h.containers for h in world.hosts.values())
    assert all(["docker", "volume", "rm", "dscluster-lab-node"] in h.calls for h in world.hosts.values())
    assert world.identity == {}


def test_up_without_the_private_key_refuses_before_touching_hosts():
    world = FakeWorld()
    with pytest.raises(ClusterError):
        up.up(SPEC, DeployOptions(), world.runner_for, PUBKEY, identity_key=None)
    assert world.all_calls() == []
    report = up.up(SPEC, DeployOptions(master_identity=False), world.runner_for, PUBKEY, verify_timeout=0.5,
                   sleep=lambda s: None)
    assert report.ok and world.identity == {}


def spec_identity(spec_path: Path) -> Path:
    from dscluster.cluster.identity import identity_path
    from dscluster.cluster.spec import load_spec

    return identity_path(load_spec(spec_path))


def test_cli_print_shows_exact_commands_and_runs_nothing(tmp_path, capsys, monkeypatch, dscluster_home):
    from dscluster import cli
    from dscluster.cluster.spec import format_spec

    spec_path = tmp_path / "dscluster.toml"
    spec_path.write_text(format_spec(SPEC))
    # Patch the classes/modules themselves (not a function others import by name at import time).
    monkeypatch.setattr(hosts.HostSSHRunner, "run", lambda *a, **k: pytest.fail("--print must not run anything"))
    monkeypatch.setattr(up, "up", lambda *a, **k: pytest.fail("--print must not run anything"))
    assert cli.main(["up", "--cluster", str(spec_path), "--print", "--image", "dscluster-node:0.1.0"]) == 0
    out = capsys.readouterr().out
    starts = [shlex.split(line) for line in out.splitlines() if "docker run --detach" in line]
    assert len(starts) == 3
    (store,) = [line for line in out.splitlines() if "docker run --rm" in line]
    assert store.endswith(" < " + shlex.quote(str(spec_identity(spec_path))))  # the key only as stdin
    remote = shlex.split(starts[0][-1])
    assert starts[0][:3] == ["ssh", "-o", "BatchMode=yes"] and starts[0][-3] == "10.0.0.1"
    # the master's agent starts the hub once the cluster has people (node/people.py), before or after `up`
    assert remote == docker_run_argv(SPEC, MASTER, DeployOptions(image="dscluster-node:0.1.0", hub=True))
    assert "/dev/infiniband" in out  # the note about auto-detected InfiniBand
    assert cli.main(["down", "--cluster", str(spec_path), "--print"]) == 0
    assert "docker stop --time 20 dscluster-lab" in capsys.readouterr().out


def test_every_message_has_a_zh_tw_translation_with_the_same_placeholders():
    import ast
    import string

    from dscluster.i18n import catalog

    zh = catalog("zh_TW")
    root = Path(__file__).resolve().parents[2] / "src" / "dscluster"
    files = ["node/lab.py", "commands/lab.py", "commands/up.py", "deploy/dockerrun.py", "deploy/hosts.py",
             "deploy/up.py"]
    fields = lambda s: sorted({f[1] for f in string.Formatter().parse(s) if f[1]})  # noqa: E731
    missing = []
    for rel in files:
        for node in ast.walk(ast.parse((root / rel).read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                template = node.args[0].value
                if template not in zh:
                    missing.append(f"{rel}: {template!r}")
                else:
                    assert fields(zh[template]) == fields(template), template
    assert not missing, "\n".join(missing)

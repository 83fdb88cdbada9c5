"""The launcher backend seam (launcher/backends): every registered backend honours one contract, a new
backend plugs in by one class, and no module outside the package compares launcher names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dscluster
from dscluster.cluster.spec import parse_spec
from dscluster.errors import ConfigError, UsageError
from dscluster.launcher import backends
from dscluster.launcher.backends import Backend, NodeTools, ToolCheck
from dscluster.launcher.plan import LaunchRequest, Target, build_plan
from dscluster.launcher.runnerflags import check_launcher
from dscluster.runs.supervising.hooks import NoHooks, hooks_class

SRC = Path(dscluster.__file__).parent
HOOKS = ("allocate", "lost", "cancel_attempt", "timed_out", "release", "force_stop")


class K8sHooks(NoHooks):
    """A scheduler's hooks: the pods are asked for once, and given back once."""

    asked = released = 0

    def allocate(self) -> bool:
        K8sHooks.asked += 1
        return True

    def release(self) -> None:
        K8sHooks.released += 1


class KubernetesBackend(Backend):
    """A Kubernetes-shaped backend, as a newcomer would add one: pods from a scheduler, no ssh."""

    name = "k8s"
    over_ssh = False
    allocates = True
    nodes_python = False
    hooks = f"{__name__}:K8sHooks"
    failure_lines = (r"pod failed: exit code [1-9]",)
    signal_line = r"pod (?P<node>[\w.-]+)/(?P<task>\d+): (?P<what>Killed|Segmentation fault)\b"
    rank_label = r"^<(?P<rank>\d+)> "

    def where(self) -> str:
        return "on Kubernetes"

    def check_tools(self, node: NodeTools) -> ToolCheck:
        if node.is_master and not node.tools.get("kubectl"):
            return ToolCheck(False, "kubectl is not installed on the master", "install kubectl")
        return ToolCheck(True, "kubectl")

    def env_values(self, req) -> dict[str, str]:
        return {"DSCLUSTER_MASTER_ADDR": req.hosts[0][0]} if req.hosts else {}

    def runner_args(self, req, *, logs, secret_env, add_file) -> list[str]:
        return [*self.selection_args(req), f"--launcher_args=--namespace=dsc-{req.run_id}"]


@pytest.fixture
def k8s():
    backends.register(KubernetesBackend)
    try:
        yield backends.get("k8s")
    finally:
        backends.unregister("k8s")


def launch_request(launcher: str, hosts=(("node1", 2), ("node2", 2)), **kw) -> LaunchRequest:
    return LaunchRequest(run_id="r-1", run_dir=Path("/shared/runs/r-1"), target=Target("train.py", args=("--x",)),
                         hosts=hosts, master_port=29600, launcher=launcher, python="/opt/venv/bin/python",
                         user_env={"HF_TOKEN": "s3cret", "MODE": "a"}, **kw)


@pytest.mark.parametrize("extra", [False, True], ids=["registered", "with-k8s"])
def test_every_backend_keeps_the_contract(extra):
    """Traits are booleans, hooks resolve to a class with every hook, the plan of an attempt is built
    (the backend's own flag after the common ones, the program last), secrets stay off the command line,
    and doctor's tool check answers with a finding (and a fix when it fails)."""
    if extra:
        backends.register(KubernetesBackend)
    try:
        assert set(backends.names()) >= {"local", "pdsh", "openmpi", "slurm"}
        for name in backends.names():
            b = backends.get(name)
            assert b.name == name
            for trait in ("in_spec", "over_ssh", "allocates", "nodes_python", "reports_rank_exits",
                          "selects_slots", "on_this_machine"):
                assert isinstance(getattr(b, trait), bool), (name, trait)
            assert not (b.over_ssh and b.allocates), name  # dscluster's ssh or a scheduler, not both
            cls = hooks_class(backends.get(name))
            assert all(callable(getattr(cls, h, None)) for h in HOOKS), name
            assert isinstance(b.where(), str)
            plan = build_plan(launch_request(name))
            argv = " ".join(plan.argv)
            assert "s3cret" not in argv and argv.endswith("train.py --x"), (name, plan.argv)
            assert plan.argv[1:4] == ["-P", "-u", "-m"] or "deepspeed.launcher.runner" in argv \
                    or "dscluster.launcher.locallaunch" in argv, name
            if b.on_this_machine:
                assert "--hostfile" not in argv and plan.world_size == 1, name
            else:
                assert f"--launcher={name}" in argv and plan.world_size == 4 and plan.master_addr == "node1"
                assert plan.rank_nodes == ("node1", "node1", "node2", "node2")
            found = b.check_tools(NodeTools("node0", True, {}, {}))
            assert isinstance(found, ToolCheck) and found.finding and (found.ok or found.fix), name
    finally:
        backends.unregister("k8s")


def test_a_new_backend_plugs_in_by_one_class(k8s, tmp_path):
    # The spec and --launcher take its name; the plan carries its own flags and environment values.
    spec = parse_spec('[cluster]\nname = "lab"\nshared_dir = "/shared"\nlauncher = "k8s"\n'
                      '[[nodes]]\naddress = "10.0.0.1"\nslots = 2\n')
    assert spec.launcher == "k8s"
    check_launcher("k8s")
    plan = build_plan(launch_request("k8s"))
    assert "--launcher=k8s" in plan.argv and "--launcher_args=--namespace=dsc-r-1" in plan.argv
    env_file = next(f for f in plan.files if f.path.name == "ds_env")
    assert "DSCLUSTER_MASTER_ADDR=node1" in env_file.text
    # The supervisor's hooks are the backend's own.
    assert hooks_class(backends.get("k8s")) is K8sHooks
    hooks = hooks_class(backends.get("k8s"))(None)
    assert hooks.allocate() and K8sHooks.asked == 1 and hooks.lost(0.0) is None
    # doctor asks it for its tools.
    from test_doctor_checks import make_spec, run

    report = run(make_spec(launcher="k8s"))
    bad = [r for r in report.failures if r.check == "launcher"]
    assert bad and bad[0].finding == "kubectl is not installed on the master" and bad[0].fix == "install kubectl"


def test_what_a_backends_launcher_prints_is_read_by_the_generic_log_readers(k8s):
    """A backend's failure lines (the supervisor), its words for a rank a signal ended (the explainer) and
    its rank label (every log reader) are its own traits: the generic readers ask the registry."""
    from dscluster import logtext, rankerror
    from dscluster.runs.supervising import detect

    failed = detect.launcher_failure("w1: pod failed: exit code 3\n", ["w1"], {"w1": "node1"})
    assert failed and failed.kind == "rank-failed" and failed.node == "node1"
    [killed] = [e for st in rankerror.streams("pod w1/2: Killed\n") for e in rankerror.launcher_exits(st)]
    assert (killed.type, killed.rank, killed.node) == ("SIGKILL", 2, "w1")
    ranks = {st.rank: st.lines for st in logtext.streams("\n".join(f"<{i % 2}> line {i}" for i in range(6)))}
    assert ranks == {0: ("line 0", "line 2", "line 4"), 1: ("line 1", "line 3", "line 5")}
    backends.unregister("k8s")  # without the backend, its words are nobody's
    assert detect.launcher_failure("w1: pod failed: exit code 3\n", ["w1"], {}) is None
    assert not [e for st in rankerror.streams("pod w1/2: Killed\n") for e in rankerror.launcher_exits(st)]
    assert len(logtext.streams("\n".join(f"<{i % 2}> line {i}" for i in range(6)))) == 1


def test_an_unknown_backend_is_refused_with_the_names_it_may_take():
    with pytest.raises(ConfigError) as err:
        parse_spec('[cluster]\nname = "lab"\nshared_dir = "/shared"\nlauncher = "pdhs"\n'
                   '[[nodes]]\naddress = "10.0.0.1"\n')
    assert "pdsh" in str(err.value.hint)
    with pytest.raises(UsageError):
        check_launcher("k8s")  # not registered here
    with pytest.raises(ValueError):
        backends.register(backends.get("pdsh").__class__)  # a name is registered once
    assert "local" not in backends.spec_names()  # --local N, not a spec's launcher


# A launcher name compared with a string, or a launcher compared with a tuple of names.
COMPARISON = re.compile(r"""launcher\w*\)?\s*(==|!=|\bin\b|\bnot in\b)\s*[("']|"""
                        r"""[=!]=\s*["'](pdsh|openmpi|slurm)["']""")


def test_no_module_outside_the_backends_compares_launcher_names():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if "backends" in path.relative_to(SRC).parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if COMPARISON.search(code):
                offenders.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
    # and the check itself finds what it is there to find
    assert COMPARISON.search('if cfg.launcher == "slurm":') and COMPARISON.search('launcher in ("pdsh", "local")')


def test_a_schedulers_request_is_the_backends_own(k8s):
    """Slurm's request is built, recorded and read back by its backend; a backend that asks nothing of a
    scheduler (the fake k8s one, pdsh) answers with the defaults."""
    from dscluster.launcher.backends.slurm.clients import SlurmAsk
    from dscluster.launcher.runnerflags import RunnerFlags
    from dscluster.runs.records.request import RunRequest

    slurm = backends.get("slurm")
    opts = RunRequest.of(command=["t.py"], launcher="slurm", runner=RunnerFlags(include="n1@n2"),
                         scheduler=SlurmAsk(nodes=0, tasks_per_node=4, time="30"))
    ask = slurm.request(opts, None)
    assert (ask.nodes, ask.tasks_per_node, ask.time, ask.nodelist, ask.ranks) == (2, 4, "30", "n1,n2", 8)
    recorded = slurm.request_record(ask, ())
    assert recorded["job_id"] is None and slurm.recorded_request(recorded) == ask
    assert slurm.allocation_args(ask, (("n1", 4),)) == ("--nodelist=n1",) and slurm.allocation_args(ask, ()) == ()
    hosts, lines = slurm.allocation_preview(ask, "r-1")
    assert hosts == (("NODE1", 4), ("NODE2", 4)) and lines[1].startswith("salloc --no-shell")
    for other in (k8s, backends.get("pdsh")):
        assert other.request(opts, None) is None and other.allocated_hosts(opts, None) == ()
        assert other.recorded_request(recorded) is None and other.request_record(ask, ()) is None
        assert other.allocation_args(ask, ()) == () and other.allocation_preview(ask, "r-1") == ((), [])
        other.check_request(opts)  # refuses nothing


def test_a_backends_translations_live_in_its_package(monkeypatch):
    """A backend's zh-TW strings are a file of the backends' package (launcher/backends/locale/zh_TW/
    NAME.json), merged into the one catalog: none of the domain files (locale/zh_TW) is a backend's."""
    from dscluster.i18n import domain_files, tr

    own = SRC / "launcher" / "backends" / "locale" / "zh_TW"
    assert (own / "mpich.json").is_file() and not list((SRC / "locale" / "zh_TW").glob("backend_*.json"))
    assert {p.stem for p in own.glob("*.json")} <= set(backends.names())  # each named after its backend
    assert own / "mpich.json" in [Path(str(f)) for f in domain_files("zh_TW")]
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    missing = "MPICH's {tool} is not installed on this machine"
    assert tr(missing, tool="mpirun.mpich") == "這台機器沒有安裝 MPICH 的 mpirun.mpich"
    fix = backends.get("mpich").check_tools(NodeTools("node0", True, {}, {})).fix
    assert fix == "在 node0 上執行 apt-get install mpich（每個節點都需要）"
    monkeypatch.setenv("DSCLUSTER_LANG", "en")
    assert tr(missing, tool="x") == "MPICH's x is not installed on this machine"


class TorchrunBackend(Backend):
    """A backend whose ranks are not started by DeepSpeed's runner: it owns the whole command line."""

    name = "trun"

    def where(self) -> str:
        return "through torchrun"

    def command(self, req, parts) -> list[str]:
        from dscluster.launcher.plan import program_argv

        rdzv = parts.runner_reads("rdzv", f"{req.hosts[0][0]}:{req.master_port}\n")
        return ["torchrun", f"--nnodes={len(req.hosts)}", f"--nproc-per-node={req.hosts[0][1]}",
                f"--rdzv-conf-file={rdzv}", *program_argv(req, [], bool(parts.secret_env))]


def test_a_backend_owns_its_whole_command_line():
    """Backend.command is the whole argv of an attempt: DeepSpeed's runner by default, anything else when a
    backend starts its ranks another way; the plan's environment file, secrets and files stay the plan's."""
    backends.register(TorchrunBackend)
    try:
        plan = build_plan(launch_request("trun"))
        assert plan.argv[:3] == ["torchrun", "--nnodes=2", "--nproc-per-node=2"], plan.argv
        assert plan.argv[-2:] == ["train.py", "--x"] and "deepspeed.launcher.runner" not in " ".join(plan.argv)
        assert "s3cret" not in " ".join(plan.argv) and plan.env["HF_TOKEN"] == "s3cret"  # secrets: env, not argv
        files = {f.path.name: f.text for f in plan.files}
        assert files["rdzv"] == "node1:29600\n" and "DSCLUSTER_RUN_ID=r-1" in files["ds_env"]
        assert plan.world_size == 4 and plan.master_addr == "node1"
        # The default command is DeepSpeed's runner with the backend's own flags after the common ones.
        default = build_plan(launch_request("pdsh")).argv
        assert "deepspeed.launcher.runner" in " ".join(default) and "--launcher=pdsh" in default
    finally:
        backends.unregister("trun")

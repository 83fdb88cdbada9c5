"""The node image seen from the controller: the spec's python/engine/node_uid, what `up` learns from the
image's labels, the runner started for nodes with another interpreter, the hosts' own dockerd (unit level)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dscluster.cluster.spec import ClusterSpec, format_spec, parse_spec, with_cluster_setting
from dscluster.deploy import dockerrun, up
from dscluster.deploy import image as img
from dscluster.deploy.dockerrun import DeployOptions
from dscluster.errors import ConfigError
from dscluster.launcher import backends
from dscluster.launcher.plan import LaunchRequest, Target, build_plan
from dscluster.runs.preparing.target import interpreters
from dscluster.runs.records.record import LaunchSpec
from dscluster.sim.hosts import docker_socket, dockerd_argv

sys.path.insert(0, str(Path(__file__).parent))
from test_deploy import HEALTHY, PRIVATE, PUBKEY, SPEC, FakeWorld  # noqa: E402

NODE_PY = "/opt/dscluster/venv/bin/python"
TEXT = '''# our lab
[cluster]
name = "lab"   # the lab's name
shared_dir = "/shared/lab"

[[nodes]]
address = "10.0.0.1"
slots = 8
'''


def test_spec_python_engine_node_uid_round_trip_and_are_checked():
    spec = parse_spec(TEXT.replace('shared_dir', f'python = "{NODE_PY}"\nengine = "podman"\nnode_uid = 10001\nshared_dir'))
    assert (spec.python, spec.engine, spec.node_uid) == (NODE_PY, "podman", 10001)
    again = parse_spec(format_spec(spec))
    assert (again.python, again.engine, again.node_uid) == (NODE_PY, "podman", 10001)
    assert parse_spec(TEXT).python is None and parse_spec(TEXT).engine is None
    with pytest.raises(ConfigError) as err:
        parse_spec(TEXT.replace("shared_dir", 'engine = "dokcer"\nshared_dir'))
    assert "docker" in err.value.hint and err.value.setting.endswith("engine")
    with pytest.raises(ConfigError) as err:
        parse_spec(TEXT.replace("shared_dir", 'python = "venv/bin/python"\nshared_dir'))
    assert "absolute" in err.value.message


def test_up_records_a_setting_keeping_the_users_comments():
    text = with_cluster_setting(TEXT, "python", NODE_PY)
    text = with_cluster_setting(text, "node_uid", 10001)
    assert "# our lab" in text and "# the lab's name" in text
    spec = parse_spec(text)
    assert spec.python == NODE_PY and spec.node_uid == 10001 and spec.nodes[0].slots == 8
    # an existing line is replaced, not repeated
    text = with_cluster_setting(text, "python", "/usr/bin/python3")
    assert text.count("python =") == 1 and parse_spec(text).python == "/usr/bin/python3"


def test_the_engine_is_the_flag_else_the_environment_else_the_spec_else_docker():
    assert dockerrun.choose_engine("podman", "docker", "docker") == "podman"
    assert dockerrun.choose_engine(None, "podman", "docker") == "podman"
    assert dockerrun.choose_engine(None, None, "podman") == "podman"
    assert dockerrun.choose_engine(None, None, None) == "docker"
    with pytest.raises(ConfigError):
        dockerrun.choose_engine(None, "dokcer", None)


def test_every_engine_command_comes_from_the_one_builder_with_the_chosen_engine():
    for engine in dockerrun.ENGINES:
        opts = DeployOptions(engine=engine, gpus="none")
        run = dockerrun.docker_run_argv(SPEC, SPEC.master, opts)
        assert run[0] == engine and "--gpus" not in run and "nvidia.com/gpu=all" not in run
        assert dockerrun.docker_rm_argv(SPEC, engine=engine)[0] == engine
        assert dockerrun.identity_store_argv(SPEC, opts)[0] == engine


def _learned(facts: str):
    world = FakeWorld(**{n.name: {"facts": facts} for n in SPEC.nodes})
    report = up.up(SPEC, DeployOptions(), world.runner_for, PUBKEY, identity_key=PRIVATE, verify_timeout=0.5,
                   sleep=lambda s: None)
    return report, world


def test_up_learns_the_images_interpreter_and_uid_and_publishes_them():
    report, world = _learned(HEALTHY + f"image_python={NODE_PY}\nimage_uid=10001\n")
    assert report.python == NODE_PY and report.node_uid == 10001
    published = parse_spec(world.shared["/shared/lab/.dscluster/dscluster.toml"])
    assert published.python == NODE_PY and published.node_uid == 10001
    report, _ = _learned(HEALTHY)  # an image without the labels: nothing learned, nothing invented
    assert report.python == "" and report.node_uid is None


def test_a_spec_python_other_than_the_images_is_named_before_anything_starts():
    spec = ClusterSpec(**{**SPEC.__dict__, "python": "/usr/bin/python3"})
    world = FakeWorld(**{n.name: {"facts": HEALTHY + f"image_python={NODE_PY}\n"} for n in SPEC.nodes})
    with pytest.raises(up.UpFailed) as err:
        up.up(spec, DeployOptions(), world.runner_for, PUBKEY, identity_key=PRIVATE, verify_timeout=0.5,
              sleep=lambda s: None)
    problem = err.value.report.problems[0]
    assert NODE_PY in problem.what and "/usr/bin/python3" in problem.what and f'python = "{NODE_PY}"' in problem.fix
    assert world.docker_runs() == []


def test_a_launch_for_nodes_with_another_interpreter_runs_the_runner_here_naming_theirs():
    spec = parse_spec(TEXT.replace("shared_dir", f'python = "{NODE_PY}"\nshared_dir'))
    cfg = interpreters(spec, backends.get("pdsh"), sys.executable)
    assert cfg == {"python": NODE_PY, "runner_python": sys.executable}
    assert interpreters(parse_spec(TEXT), backends.get("pdsh"), sys.executable) == {"python": sys.executable, "runner_python": None}
    assert interpreters(spec, backends.get("slurm"), sys.executable)["runner_python"] is None
    # The run record's launch section carries both; its one request builder hands them to the plan.
    launch = LaunchSpec.from_json({"program": "train.py", "hosts": [["10.0.0.1", 1], ["10.0.0.2", 1]],
                                   "launcher": "pdsh", **cfg})
    req = launch.request(1, 29500, run_id="r1", run_dir=Path("/shared/lab/runs/r1"))
    assert (req.python, req.runner_python) == (NODE_PY, sys.executable)
    plan = build_plan(req)
    assert plan.argv[0] == sys.executable and plan.argv[plan.argv.index("deepspeed.launcher.runner") - 1] == NODE_PY
    env_file = next(f for f in plan.files if f.path.name == "ds_env").text
    assert f"PATH={Path(NODE_PY).parent}:" in env_file  # the nodes' bin dir first (ninja, deepspeed there)
    # The bootstrap really makes DeepSpeed's runner see the nodes' interpreter as sys.executable.
    probe = plan.argv[:plan.argv.index("deepspeed.launcher.runner")] + ["json.tool"]
    probe[probe.index(NODE_PY)] = "/nodes/python"
    code = probe[probe.index("-c") + 1].replace("runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)",
                                                "print(sys.executable, sys.argv[1:], '' in sys.path)")
    probe[probe.index("-c") + 1] = code
    out = subprocess.run(probe, capture_output=True, text=True, timeout=30, cwd="/").stdout.split()
    assert out[0] == "/nodes/python" and out[-1] == "False", out
    # Same interpreter on both sides: the plain safe-path runner, as before.
    same = build_plan(LaunchRequest("r1", Path("/r"), Target("t.py"), (("a", 1),), 29500, python=sys.executable))
    assert same.argv[:2] == [sys.executable, "-u"] and "sys.executable" not in " ".join(same.argv)


def test_each_simulated_hosts_dockerd_is_its_own_with_host_networking_only(tmp_path):
    argv = dockerd_argv(tmp_path / "host0", Path("/run/dscluster/hosts/x/host0"))
    joined = " ".join(argv)
    assert f"--host unix://{docker_socket(Path('/run/dscluster/hosts/x/host0'))}" in joined
    assert "--bridge none" in joined and "--iptables=false" in joined and "--ip-masq=false" in joined
    assert "native.cgroupdriver=cgroupfs" in joined and "--storage-driver overlay2" in joined
    assert str(tmp_path / "host0" / "docker" / "data") in argv and "--config-file" in argv


def test_known_build_failures_are_explained_with_their_fix():
    cause, fix = img.explain_build_failure("...\nERROR: BuildKit is enabled but the buildx component is missing or "
                                           "broken.\n")
    assert "buildx" in cause and "/usr/bin" in fix
    assert "--ca-bundle" in img.explain_build_failure("SSLError CERTIFICATE_VERIFY_FAILED self-signed")[1]
    assert img.explain_build_failure("E: Unable to locate package foo") is None

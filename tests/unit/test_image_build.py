"""The node image's build as data (deploy/image.py) and the engine-dependent parts of `up` (podman)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from dscluster.cluster.runner import CommandResult
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.commands import image as image_cmd
from dscluster.deploy import dockerrun, hosts
from dscluster.deploy import image as img
from dscluster.deploy.dockerrun import DeployOptions, docker_run_argv
from dscluster.errors import ClusterError, ConfigError

ROOT = Path(__file__).resolve().parents[2]
SPEC = ClusterSpec(name="lab", shared_dir=Path("/shared/lab"), ssh_user="dscluster", ssh_port=2222,
                   nodes=(NodeSpec("10.0.0.1", 1, "n1", 2222), NodeSpec("10.0.0.2", 1, "n2", 2222)))
MASTER = SPEC.nodes[0]


@pytest.fixture
def wheel(tmp_path) -> Path:
    path = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    path.write_bytes(b"not really a wheel")
    return path


def test_find_links_from_pip_config_and_the_cp311_cpu_wheel(tmp_path, wheel):
    text = ":env:.find-links='/opt/wheels'\nglobal.find-links='file:///a /b'\nglobal.cert='/x'\n"
    assert img.pip_find_links(text) == ["/opt/wheels", "/a", "/b"]
    (tmp_path / "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert img.find_torch_wheel(["/nonexistent", tmp_path]) == wheel
    assert img.find_torch_wheel(["/nonexistent"]) is None


def test_cpu_build_argv_mounts_nothing_secret_and_names_flavor_base_label(wheel):
    build = img.ImageBuild(flavor="cpu", engine="podman", torch_wheel=wheel,
                           ca_bundle=Path("/etc/ssl/certs/ca-certificates.crt")).validate()
    argv = img.build_argv(build, Path("/ctx"), "abc123")
    assert argv[:2] == ["podman", "build"] and argv[-1] == "/ctx"
    assert "FLAVOR=cpu" in argv and f"BASE={img.BOOTSTRAP_BASE}" in argv
    assert "io.dscluster.inputs=abc123" in argv and build.image == "dscluster-node:0.1.0-cpu"
    assert argv[argv.index("--format") + 1] == "docker"  # OCI would drop SHELL and HEALTHCHECK
    assert argv[argv.index("--secret") + 1] == "id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt"
    assert img.build_env(build) == {}


def test_the_image_installs_every_registered_launchers_packages(wheel):
    # A launcher backend added in its own module (Backend.node_packages) reaches the image `image build` makes,
    # without an edit of the Dockerfile; a --build-arg of the user's own wins.
    from dscluster.launcher import backends
    from dscluster.launcher.backends.pdsh import PdshBackend

    build = img.ImageBuild().validate()
    argv = img.build_argv(build, Path("/ctx"), "h")
    given = argv[argv.index(f"LAUNCHER_PACKAGES={img.launcher_packages()}")]
    assert {"pdsh", "openmpi-bin", "mpich"} <= set(given.split("=", 1)[1].split())

    class Extra(PdshBackend):
        name = "extra"
        node_packages = ("extra-launcher",)

    backends.register(Extra)
    try:
        assert "extra-launcher" in img.launcher_packages().split()
        assert f"LAUNCHER_PACKAGES={img.launcher_packages()}" in img.build_argv(build, Path("/ctx"), "h")
    finally:
        backends.unregister("extra")
    own = img.ImageBuild(build_args=(("LAUNCHER_PACKAGES", "pdsh"),)).validate()
    assert [a for a in img.build_argv(own, Path("/ctx"), "h") if a.startswith("LAUNCHER_PACKAGES=")] == \
        ["LAUNCHER_PACKAGES=pdsh"]
    # The Dockerfile installs them; its default serves a build by hand (the backends of this repository's).
    text = (ROOT / "docker" / "Dockerfile").read_text()
    assert "${LAUNCHER_PACKAGES}" in text and 'ARG LAUNCHER_PACKAGES="pdsh ' in text


def test_cuda_build_on_docker_uses_buildkit_and_the_debian_base():
    build = img.ImageBuild().validate()
    argv = img.build_argv(build, Path("/ctx"), "h")
    assert argv[0] == "docker" and f"BASE={img.BOOTSTRAP_BASE}" in argv and "--format" not in argv
    assert "--secret" not in argv and build.image == "dscluster-node:0.1.0"
    assert img.build_env(build) == {"DOCKER_BUILDKIT": "1"}


@pytest.mark.parametrize("kwargs, setting", [
    ({"flavor": "rocm"}, "flavor"), ({"engine": "nerdctl"}, "engine"), ({"flavor": "cpu"}, "wheels"),
    ({"ca_bundle": Path("/nonexistent.pem")}, "ca_bundle"), ({"build_args": (("BASE", "x"),)}, "build_arg"),
])
def test_bad_builds_name_their_setting(kwargs, setting):
    with pytest.raises(ConfigError) as err:
        img.ImageBuild(**kwargs).validate()
    assert err.value.setting == setting


def test_inputs_hash_follows_contents_flavor_and_wheel(tmp_path, wheel):
    build = img.ImageBuild(flavor="cpu", torch_wheel=wheel)
    first = img.inputs_hash(build, ROOT)
    assert first == img.inputs_hash(build, ROOT)
    assert first != img.inputs_hash(img.ImageBuild(flavor="cuda"), ROOT)
    wheel.write_bytes(b"another build of the wheel")
    assert img.inputs_hash(build, ROOT) != first
    team = tmp_path / "req.txt"
    team.write_text("einops==0.8.1\n")
    assert img.inputs_hash(img.ImageBuild(flavor="cpu", torch_wheel=wheel, requirements=team), ROOT) != \
        img.inputs_hash(build, ROOT)


def test_staged_context_is_the_allow_list_plus_the_wheel(tmp_path, wheel):
    team = tmp_path / "team.txt"
    team.write_text("einops==0.8.1\n")
    ctx = img.stage_context(img.ImageBuild(flavor="cpu", torch_wheel=wheel, requirements=team), ROOT,
                            tmp_path / "ctx")
    top = sorted(p.name for p in ctx.iterdir())
    assert top == ["README.md", "docker", "jupyter-config", "pyproject.toml", "src"]
    assert (ctx / img.WHEELS_DIR / wheel.name).read_bytes() == wheel.read_bytes()
    assert (ctx / img.TEAM_REQUIREMENTS).read_text() == "einops==0.8.1\n"
    assert not list(ctx.rglob("__pycache__")) and not list(ctx.rglob("*.pyc"))
    assert not (ctx / "tests").exists() and not (ctx / ".venv").exists()


def test_cli_build_print_shows_the_command(capsys, wheel):
    args = argparse.Namespace(flavor="cpu", engine="podman", tag="", base="", wheels=[str(wheel.parent)],
                              ca_bundle="none", requirements=None, build_arg=["NODE_UID=20001"], force=False,
                              print_only=True)
    assert image_cmd.cmd_build(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("podman build ") and "NODE_UID=20001" in out and "--secret" not in out


def test_a_build_that_exits_0_without_an_image_is_a_failure(tmp_path, monkeypatch, dscluster_home):
    # podman stopped by SIGTERM mid-build exits 0 and leaves no image: "built" with size 0.00 GB was printed.
    fake = tmp_path / "bin" / "podman"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncase \"$1\" in build) exit 0 ;; *) exit 1 ;; esac\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    args = argparse.Namespace(flavor="cuda", engine="podman", tag="t44:x", base="some-base:1", wheels=[],
                              ca_bundle="none", requirements=None, build_arg=[], force=False, print_only=False)
    with pytest.raises(ClusterError) as err:
        image_cmd.cmd_build(args)
    assert "no image t44:x" in str(err.value) and "image-build-cuda.log" in str(err.value.hint)


# --- podman in `up` ------------------------------------------------------------------------------

def test_podman_run_is_the_same_argv_with_cdi_gpus():
    docker = docker_run_argv(SPEC, MASTER, DeployOptions())
    podman = docker_run_argv(SPEC, MASTER, DeployOptions(engine="podman"))
    assert podman[0] == "podman" and podman[1:] != docker[1:]
    assert podman[podman.index("--device") + 1] == "nvidia.com/gpu=all" and "--gpus" not in podman
    assert [a for a in podman if a not in ("--device", "nvidia.com/gpu=all")][1:] == \
        [a for a in docker if a not in ("--gpus", "all")][1:]
    assert dockerrun.gpu_flags("0,1", "podman") == ["--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=1"]
    cpu = docker_run_argv(SPEC, MASTER, DeployOptions(engine="podman", gpus="none"))
    assert "--device" not in cpu and "--gpus" not in cpu


def test_ulimits_default_none_and_checked():
    assert "memlock=-1" in docker_run_argv(SPEC, MASTER, DeployOptions())
    assert "--ulimit" not in docker_run_argv(SPEC, MASTER, DeployOptions(ulimits=()))
    with pytest.raises(ConfigError):
        DeployOptions(ulimits=("memlock",)).validate()
    assert dockerrun.docker_rm_argv(SPEC, force=True, engine="podman") == ["podman", "rm", "--force", "dscluster-lab"]


def _facts(**kw) -> hosts.HostFacts:
    base = dict(node="10.0.0.1", reachable=True, docker="4.3.1", gpus=-1, shared_dir=True, image_user="dscluster",
                image_uid="10001", shared_stat="10001 10001 755", engine="podman")
    return hosts.HostFacts(**{**base, **kw})


def test_preflight_script_asks_the_chosen_engine_and_parses():
    argv = hosts.preflight_argv(SPEC, MASTER, DeployOptions(engine="podman"))
    assert argv[4:8] == ["podman", "/shared/lab", "dscluster-lab", dockerrun.DEFAULT_IMAGE]
    out = "docker=4.3.1\nimage_user=dscluster\nimage_uid=10001\nshared_dir=yes\nshared_stat=0 0 755\npreflight=done\n"
    facts = hosts.parse_facts(CommandResult("10.0.0.1", tuple(argv), 0, out, ""), "podman")
    assert facts.engine == "podman" and facts.image_uid == "10001" and facts.shared_stat == "0 0 755"


def test_podman_problems_name_the_fix():
    opts = DeployOptions(engine="podman", gpus="none")
    assert hosts.host_problems(SPEC, MASTER, opts, _facts()) == []
    missing = hosts.host_problems(SPEC, MASTER, opts, _facts(docker="", docker_error="podman: command not found"))
    assert "podman is not installed" in missing[0].what and "apt-get install podman" in missing[0].fix
    image = hosts.host_problems(SPEC, MASTER, opts, _facts(image_user=None, image_uid=""))
    assert "podman save dscluster-node:0.1.0 | ssh 10.0.0.1 podman load" in image[0].fix
    root_owned = hosts.host_problems(SPEC, MASTER, opts, _facts(shared_stat="0 0 755"))
    assert "not writable by the image's user (UID 10001" in root_owned[0].what
    assert "chown 10001:10001 /shared/lab" in root_owned[0].fix
    gpus = hosts.host_problems(SPEC, MASTER, DeployOptions(engine="podman"), _facts(gpus=0))
    assert any("no GPUs found" in p.what and "--gpus none" in p.fix for p in gpus)


@pytest.mark.parametrize("stat, ok", [("10001 10001 755", True), ("10001 10001 555", False), ("0 10001 775", True),
                                      ("0 0 755", False), ("0 0 1777", True), ("garbage", True)])
def test_shared_writable(stat, ok):
    assert hosts.shared_writable(stat, "10001") is ok

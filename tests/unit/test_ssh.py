"""The exact ssh / pdsh / mpirun command lines, the generated ssh_config, host-key pinning, the identity."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from dscluster.cluster import identity, pdsh, ssh
from dscluster.cluster.runner import CommandResult
from dscluster.cluster.spec import ClusterSpec, NodeSpec

needs_keygen = pytest.mark.skipif(not shutil.which("ssh-keygen"), reason="needs ssh-keygen (openssh-client)")


@pytest.fixture
def spec(tmp_path):
    state = tmp_path / "st"
    return ClusterSpec(name="lab", shared_dir=tmp_path / "shared", ssh_user="trainer", ssh_port=2222,
                       nodes=(NodeSpec("10.0.0.1", 2, "node0", 2222), NodeSpec("gpu02", 1, "gpu02", 2200)),
                       state_dir=state)


def test_ssh_base_argv_and_runner_argv_exact(spec):
    cfg = str(spec.state_dir / "ssh_config")
    assert ssh.ssh_base_argv(spec, spec.nodes[0]) == ["ssh", "-F", cfg, "node0"]
    runner = ssh.SSHRunner(spec, spec.nodes[1])
    assert runner.node == "gpu02"
    assert runner.argv(["echo", "a b", "$HOME", "x;rm -rf /"], env={"K": "v w"}, cwd="/s p") == [
        "ssh", "-F", cfg, "gpu02", "--",
        "cd '/s p' && env 'K=v w' echo 'a b' '$HOME' 'x;rm -rf /'"]


def test_remote_command_survives_the_remote_shell():
    # What the remote login shell receives must re-split into exactly the original argv.
    argv = ["printf", "%s\n", "it's", "a b", "$(id)", "`id`", "*", "new\nline", ""]
    assert shlex.split(ssh.remote_command(argv)) == argv
    out = subprocess.run(["sh", "-c", ssh.remote_command(argv)], capture_output=True, text=True).stdout
    assert out == "it's\na b\n$(id)\n`id`\n*\nnew\nline\n\n"


def test_ssh_config_is_strict_and_per_cluster(spec):
    text = ssh.render_ssh_config(spec)
    state = spec.state_dir
    assert "Host node0 10.0.0.1\n  HostName 10.0.0.1\n  Port 2222\n  HostKeyAlias node0\n" in text
    assert "Host gpu02\n  HostName gpu02\n  Port 2200\n  HostKeyAlias gpu02\n" in text
    for line in ["User trainer", f"IdentityFile {state}/id_ed25519", "IdentitiesOnly yes", "IdentityAgent none",
                 f"UserKnownHostsFile {state}/known_hosts", "GlobalKnownHostsFile /dev/null",
                 "StrictHostKeyChecking yes", "BatchMode yes", "PasswordAuthentication no",
                 "KbdInteractiveAuthentication no", "ForwardAgent no", "ConnectTimeout 10",
                 "ServerAliveInterval 5", "ServerAliveCountMax 3", "ControlMaster auto", "ControlPersist 60s",
                 "UpdateHostKeys no"]:
        assert f"\n  {line}\n" in text, line
    assert "StrictHostKeyChecking no" not in text and "accept-new" not in text
    control = next(line.split()[1] for line in text.splitlines() if line.strip().startswith("ControlPath"))
    # sun_path is 108 bytes and ssh adds a 17-char suffix while creating the socket; %C is 40 hex chars.
    assert len(control.replace("%C", "x" * 40)) + 17 < 108
    # ssh itself accepts the file (-G parses it and prints the effective options).
    if shutil.which("ssh"):
        cfg = spec.state_dir / "ssh_config"
        cfg.parent.mkdir(parents=True)
        cfg.write_text(text)
        out = subprocess.run(["ssh", "-G", "-F", str(cfg), "node0"], capture_output=True, text=True).stdout
        assert "stricthostkeychecking true" in out and "hostname 10.0.0.1" in out and "port 2222" in out
        assert "hostkeyalias node0" in out and "user trainer" in out and "batchmode yes" in out


def test_long_state_dir_gets_a_short_private_control_dir(tmp_path):
    spec = ClusterSpec(name="x", shared_dir=tmp_path, ssh_user="u", nodes=(NodeSpec("a", 1, "a"),),
                       state_dir=tmp_path / ("d" * 80))
    assert len(str(ssh.control_dir(spec))) <= 40
    assert ssh.control_path(spec).endswith("-%C")


def test_a_runs_sessions_ride_its_own_master_never_the_shared_one(spec, tmp_path):
    path = ssh.run_control_path(spec, "run-1")
    shared = ssh.control_path(spec)
    assert path.startswith(shared[:-len("%C")]) and path.endswith("-%C") and path != shared  # sim teardown's prefix
    assert path != ssh.run_control_path(spec, "run-2")  # one per run
    assert ssh.ride(path) == ["-o", "ControlMaster=no", "-o", f"ControlPath={path}"]  # never starts a master
    assert ssh.ride(None) == ssh.NO_MUX
    runner = ssh.SSHRunner(spec, spec.nodes[0], multiplex=False, control_path=path)
    assert runner.prefix()[-6:] == ["-o", "ControlMaster=no", "-o", f"ControlPath={path}", "node0", "--"]
    assert ssh.SSHRunner(spec, spec.nodes[0], multiplex=False).prefix()[-6:] == [*ssh.NO_MUX, "node0", "--"]
    # A path that would not travel as one word in pdsh's ssh arguments: the sessions connect on their own.
    spaced = ClusterSpec(name="x", shared_dir=tmp_path, ssh_user="u", nodes=(NodeSpec("a", 1, "a"),),
                         state_dir=Path("/tmp/my state"))  # short: its own cm/ is used
    assert ssh.run_control_path(spaced, "run-1") is None


def test_the_launchers_sessions_ride_the_run_masters_with_the_recorded_path(spec):
    from dscluster.launcher.backends import OpenMPIBackend, PdshBackend
    from dscluster.runs.supervising.masters import riding_transport

    path = ssh.run_control_path(spec, "run-1")
    for backend in (PdshBackend(), OpenMPIBackend()):
        recorded = {**backend.transport_env(spec, tuple(ssh.NO_MUX)), "PATH": "/launching/users/path"}
        env = riding_transport(recorded, backend.transport_env(spec, tuple(ssh.NO_MUX)),
                               backend.transport_env(spec, tuple(ssh.ride(path))))
        assert env["PATH"] == "/launching/users/path"  # as recorded at launch, not the supervisor's
        assert any(f"ControlPath={path}" in v and "ControlMaster=no" in v for v in env.values()), env
        assert not any("ControlPath=none" in v for v in env.values()), env


def test_pdsh_command_and_env_exact(spec):
    argv, env = pdsh.pdsh_argv(spec, ["hostname", "-I"], path="/usr/bin:/bin")
    assert argv == ["pdsh", "-S", "-R", "ssh", "-f", "1024", "-t", "10", "-w", "node0,gpu02", "hostname -I"]
    assert env == {"PATH": f"{spec.state_dir}/bin:/usr/bin:/bin", "PDSH_RCMD_TYPE": "ssh"}
    argv, _ = pdsh.pdsh_argv(spec, ["true"], hosts=["gpu02"], command_timeout=30, path="")
    assert argv == ["pdsh", "-S", "-R", "ssh", "-f", "1024", "-t", "10", "-u", "30", "-w", "gpu02", "true"]
    # the wrapper dir is never added twice
    assert pdsh.pdsh_env(spec, path=f"{spec.state_dir}/bin:/bin")["PATH"] == f"{spec.state_dir}/bin:/bin"


def test_ssh_wrapper_exact(spec):
    assert ssh.render_ssh_wrapper(spec, "/usr/bin/ssh") == (
        "#!/bin/sh\n"
        "# dscluster: every ssh (pdsh, DeepSpeed's checks, an MPI launcher) uses cluster 'lab''s config.\n"
        f"exec /usr/bin/ssh -F {spec.state_dir}/ssh_config \"$@\"\n")


@pytest.mark.skipif(not shutil.which("ssh"), reason="needs the OpenSSH client")
def test_ssh_wrapper_runs_the_real_ssh_with_the_cluster_config(spec, monkeypatch):
    folder = ssh.write_ssh_wrapper(spec)
    wrapper = folder / "ssh"
    assert stat.S_IMODE(wrapper.stat().st_mode) == 0o755
    (spec.state_dir / "ssh_config").write_text(ssh.render_ssh_config(spec))
    # `ssh -G` through the wrapper, found first on PATH (as pdsh and DeepSpeed find it), shows the cluster config.
    env = {**os.environ, **pdsh.pdsh_env(spec)}
    out = subprocess.run(["ssh", "-G", "node0"], capture_output=True, text=True, env=env).stdout
    assert "hostname 10.0.0.1" in out and "user trainer" in out
    # re-writing with the wrapper dir already on PATH must not make the wrapper call itself
    monkeypatch.setenv("PATH", env["PATH"])
    ssh.write_ssh_wrapper(spec)
    assert str(folder) not in wrapper.read_text().split("exec ")[1].split(" -F")[0]


def test_mpirun_rsh_agent(spec):
    agent = f"{spec.state_dir}/bin/ssh"
    from dscluster.launcher.backends import openmpi

    assert openmpi.mpirun_rsh_agent(spec) == agent
    # `ssh` from PATH: the wrapper for mpirun, the node's own ssh for the orteds (MCA params are forwarded)
    assert openmpi.openmpi_args(spec) == ["--mca", "plm_rsh_agent", "ssh"]
    assert openmpi.openmpi_env(spec, path="/usr/bin") == {"PATH": f"{spec.state_dir}/bin:/usr/bin"}


def _publish(shared: Path, name: str, key: str, addresses=()) -> None:
    folder = identity.hostkeys_dir(shared)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({"name": name, "addresses": list(addresses), "key": key}))


def test_host_keys_pinned_on_first_sight_never_silently_replaced(spec):
    spec.state_dir.mkdir(parents=True)
    _publish(spec.shared_dir, "node0", "ssh-ed25519 AAAA0 node0")
    _publish(spec.shared_dir, "other-hostname", "ssh-ed25519 AAAAg gpu02", addresses=["gpu02"])
    report = ssh.sync_known_hosts(spec)
    assert report.added == ["node0", "gpu02"] and not report.changed and not report.missing
    assert ssh.known_hosts_path(spec).read_text() == "node0 ssh-ed25519 AAAA0\ngpu02 ssh-ed25519 AAAAg\n"
    assert stat.S_IMODE(ssh.known_hosts_path(spec).stat().st_mode) == 0o600
    _publish(spec.shared_dir, "node0", "ssh-ed25519 AAAAnew node0")  # node re-created, or an attacker
    report = ssh.sync_known_hosts(spec)
    assert report.changed == ["node0"] and not report.added
    assert ssh.read_known_hosts(spec)["node0"] == "ssh-ed25519 AAAA0"
    report = ssh.sync_known_hosts(spec, trust=["node0"])  # `dscluster config trust node0`
    assert report.added == ["node0"] and ssh.read_known_hosts(spec)["node0"] == "ssh-ed25519 AAAAnew"
    (identity.hostkeys_dir(spec.shared_dir) / "node0.json").unlink()
    (identity.hostkeys_dir(spec.shared_dir) / "other-hostname.json").unlink()
    ssh.known_hosts_path(spec).unlink()
    assert ssh.sync_known_hosts(spec).missing == ["node0", "gpu02"]


@needs_keygen
def test_identity_is_private_and_only_the_public_half_is_published(spec):
    spec.shared_dir.mkdir()
    key = identity.ensure_identity(spec)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert key.read_text().startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    before = key.read_text()
    assert identity.ensure_identity(spec) == key and key.read_text() == before  # kept, not regenerated
    pub = identity.publish_cluster_pubkey(spec)
    assert pub == spec.shared_dir / ".dscluster" / "cluster.pub"
    assert pub.read_text().startswith("ssh-ed25519 ") and pub.read_text().strip().endswith("dscluster-lab")
    assert not any("PRIVATE" in p.read_text() for p in spec.shared_dir.rglob("*") if p.is_file())
    os.chmod(key, 0o644)  # ssh would refuse it: repaired
    identity.ensure_identity(spec)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


@needs_keygen
def test_ensure_ssh_files_writes_config_wrapper_and_pins(spec):
    identity.ensure_identity(spec)
    _publish(spec.shared_dir, "node0", "ssh-ed25519 AAAA0 c")
    report = ssh.ensure_ssh_files(spec)
    assert report.added == ["node0"] and report.missing == ["gpu02"]
    assert ssh.ssh_config_path(spec).read_text() == ssh.render_ssh_config(spec)
    assert stat.S_IMODE(ssh.ssh_config_path(spec).stat().st_mode) == 0o600
    assert (ssh.ssh_wrapper_dir(spec) / "ssh").exists()
    assert stat.S_IMODE(ssh.control_dir(spec).stat().st_mode) == 0o700
    assert [r.node for r in ssh.runners(spec)] == ["node0", "gpu02"]


def test_ensure_ssh_files_without_identity_says_run_init(spec):
    from dscluster.errors import ConfigError

    with pytest.raises(ConfigError, match="no SSH identity") as exc:
        ssh.ensure_ssh_files(spec)
    assert "dscluster init" in exc.value.hint


@pytest.mark.parametrize("stderr,rc,timed_out,cause", [
    ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@", 255, False, "host key changed"),
    ("Host key verification failed.", 255, False, "not the pinned one"),
    ("ssh: connect to host 10.0.0.1 port 2222: Connection refused", 255, False, "nothing listens"),
    ("trainer@10.0.0.1: Permission denied (publickey).", 255, False, "rejects the cluster key"),
    ("ssh: connect to host 10.0.0.1 port 2222: No route to host", 255, False, "no network route"),
    ("ssh: connect to host x port 2222: Connection timed out", 255, False, "timed out"),
    ("", None, True, "deadline"),
])
def test_ssh_failure_reasons(stderr, rc, timed_out, cause):
    result = CommandResult("node1", ("true",), rc, "", stderr, timed_out=timed_out)
    found, fix = ssh.ssh_failure(result)
    assert cause in found and fix


def test_ssh_failure_is_none_for_a_remote_command_failure():
    assert ssh.ssh_failure(CommandResult("n", ("false",), 1, "", "")) is None


@needs_keygen
def test_fingerprint_matches_ssh_keygen(tmp_path):
    key = tmp_path / "k"
    identity.generate_keypair(key, "c")
    pub = (tmp_path / "k.pub").read_text()
    listed = subprocess.run(["ssh-keygen", "-lf", str(tmp_path / "k.pub")], capture_output=True, text=True)
    expected = listed.stdout.split()[1]
    assert ssh.fingerprint(pub) == expected

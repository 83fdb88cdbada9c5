"""The node agent's pieces: hardened sshd config, user checks, path checks, argument errors."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.node import agent, sshd


def test_sshd_config_is_key_only_no_root_keys_only_from_roots_files(tmp_path):
    text = sshd.render_sshd_config(port=2222, user="trainer", host_key=tmp_path / "hk",
                                   authorized_keys=tmp_path / "ak", listen="10.0.0.1")
    lines = text.splitlines()
    for line in ["Port 2222", "ListenAddress 10.0.0.1", f"HostKey {tmp_path}/hk",
                 "AuthorizedKeysFile /etc/dscluster/keys/%u",
                 "AuthenticationMethods publickey", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                 "PermitEmptyPasswords no", "UsePAM no", "PermitRootLogin no", "DenyUsers root",
                 "StrictModes yes", "PermitUserEnvironment no", "X11Forwarding no", "AllowAgentForwarding no",
                 "LogLevel VERBOSE", "ClientAliveInterval 5", "ClientAliveCountMax 3", "PidFile none"]:
        assert line in lines, line
    # the node user's keys (the cluster key) only for the node user: the Match block closes the file
    assert lines[-2:] == ["Match User trainer", f"    AuthorizedKeysFile {tmp_path}/ak"]
    assert "ListenAddress" not in sshd.render_sshd_config(port=1, user="u", host_key=Path("/k"),
                                                          authorized_keys=Path("/a"))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ssh-keygen"), reason="sshd -T needs root and OpenSSH")
def test_effective_sshd_config_as_sshd_reads_it(tmp_path):
    try:
        binary = sshd.find_sshd()
    except ConfigError:
        pytest.skip("openssh-server not installed")
    key = sshd.ensure_host_key(tmp_path, "n")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    cfg = tmp_path / "sshd_config"
    cfg.write_text(sshd.render_sshd_config(port=2222, user="nobody", host_key=key, authorized_keys=tmp_path / "ak"))
    sshd.ensure_privsep_dir()  # as the agent does before it (alone, this test must not need a cluster test's sshd first)
    sshd.test_config(binary, cfg)
    out = subprocess.run([binary, "-T", "-f", str(cfg)], capture_output=True, text=True, check=True).stdout
    effective = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert effective["passwordauthentication"] == "no"
    assert effective["kbdinteractiveauthentication"] == "no"
    assert effective["permitrootlogin"] == "no"
    assert effective["authenticationmethods"] == "publickey"
    assert effective["usepam"] == "no" and "allowusers" not in effective and effective["denyusers"] == "root"
    assert effective["authorizedkeysfile"] == "/etc/dscluster/keys/%u"

    def keys_of(user: str) -> str:
        out = subprocess.run([binary, "-T", "-f", str(cfg), "-C", f"user={user},host=n,addr=10.0.0.2"],
                             capture_output=True, text=True, check=True).stdout
        return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)["authorizedkeysfile"]

    # the node user logs in with the cluster key only; a person (or any other account) with their own file
    assert keys_of("nobody") == str(tmp_path / "ak")
    assert keys_of("alice") == "/etc/dscluster/keys/%u"
    assert effective["port"] == "2222" and effective["loglevel"] == "VERBOSE"
    # the key is kept across restarts (its pin must stay valid)
    before = key.read_text()
    assert sshd.ensure_host_key(tmp_path, "n").read_text() == before


def test_authorized_keys_line():
    line = sshd.authorized_keys_text("ssh-ed25519 AAAAC3 dscluster-lab\n")
    assert line == "no-agent-forwarding,no-X11-forwarding ssh-ed25519 AAAAC3 dscluster-lab\n"
    with pytest.raises(ConfigError, match="malformed"):
        sshd.authorized_keys_text("-----BEGIN OPENSSH PRIVATE KEY-----")


def test_strict_modes_path_check(tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o777)
    with pytest.raises(PermissionNeeded, match="writable by other users") as exc:
        sshd.check_strict_modes_path(loose / "state", os.getuid())
    assert "--state-dir" in exc.value.hint


def test_user_checks():
    with pytest.raises(ConfigError, match="does not exist") as exc:
        agent.check_user("no-such-user-dscluster")
    assert "useradd" in exc.value.hint and "usermod -p '*'" in exc.value.hint
    with pytest.raises(ConfigError, match="is root"):
        agent.check_user("root")
    with pytest.raises(ConfigError, match="no login shell") as exc:
        agent.check_user("nobody")  # /usr/sbin/nologin on Debian
    assert "--shell /bin/bash" in exc.value.hint


def _args(**kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    agent.add_arguments(parser)
    ns = parser.parse_args([])
    for k, v in kw.items():
        setattr(ns, k, v)
    return ns


def test_options_from_args(monkeypatch):
    monkeypatch.delenv("DSCLUSTER_SHARED", raising=False)
    with pytest.raises(ConfigError, match="no shared directory"):
        agent.options_from_args(_args(shared_dir=None))
    with pytest.raises(ConfigError, match="out of range"):
        agent.options_from_args(_args(shared_dir="/s", port=0))
    opts = agent.options_from_args(_args(shared_dir="/s", role="master", name="n0"))
    assert (opts.shared_dir, opts.user, opts.port, opts.role, opts.node_name) == (Path("/s"), "dscluster", 2222,
                                                                                  "master", "n0")


def test_agent_needs_root(tmp_path, monkeypatch):
    # Runs as root in CI too: only the euid the agent sees is faked (a unit-level fake).
    monkeypatch.setattr(agent.os, "geteuid", lambda: 1000)
    with pytest.raises(PermissionNeeded, match="must run as root"):
        agent.prepare(agent.AgentOptions(shared_dir=tmp_path))


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the real preparation as root")
def test_prepare_refuses_root_and_a_missing_cluster_key(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="is root"):
        agent.prepare(agent.AgentOptions(shared_dir=tmp_path, user="root"))
    import pwd

    monkeypatch.setattr(agent, "check_user", lambda user: pwd.getpwnam("nobody"))
    with pytest.raises(ConfigError, match="no cluster public key") as exc:
        agent.prepare(agent.AgentOptions(shared_dir=tmp_path, user="nobody", state_dir=tmp_path / "st"))
    assert "dscluster init" in exc.value.hint
    assert not (tmp_path / "st").exists()  # nothing written before the inputs are valid
    with pytest.raises(ConfigError, match="does not exist on this node"):
        agent.prepare(agent.AgentOptions(shared_dir=tmp_path / "missing", user="nobody"))

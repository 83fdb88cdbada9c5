"""The people of a cluster and the hub, without root: [[users]] in the spec (parsed, refused with the
line and the fix, written back keeping the rest), the node scripts' outcomes, the public-key check,
the hub's password hashes, its config (no secret in it; each person's lab with the panel), its
self-signed certificate. The accounts, the hub and the browser are tests/cluster/test_hub_sim.py's."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from dscluster.cluster.spec import format_spec, parse_spec, with_users
from dscluster.cluster.specmodel import ClusterSpec, UserSpec
from dscluster.errors import ConfigError
from dscluster.node import accounts, hubpass
from dscluster.node.hubconfig import HubLayout, HubPorts, hub_config, singleuser_config

SPEC = """# our lab
[cluster]
name = "lab"
shared_dir = "/shared"   # NFS

[[nodes]]
address = "10.0.0.1"
slots = 2
"""


def test_users_are_read_written_and_kept_through_a_round_trip():
    text = SPEC + '\n[[users]]\nname = "alice"\nuid = 2001\n\n[[users]]\nname = "bob"\nuid = 2002\nadmin = true\n'
    spec = parse_spec(text)
    assert spec.users == (UserSpec("alice", 2001), UserSpec("bob", 2002, admin=True))
    assert spec.person("bob").admin and spec.person("carol") is None
    assert parse_spec(format_spec(spec)) == replace(spec, path=None)
    assert ClusterSpec.from_dict(spec.to_dict()) == spec
    assert ClusterSpec.from_dict({**spec.to_dict(), "users": None}).users == ()  # a record from before


def test_with_users_replaces_only_the_users_tables():
    once = with_users(SPEC, (UserSpec("alice", 2001),))
    assert "# our lab" in once and "# NFS" in once
    twice = with_users(once, (UserSpec("alice", 2001), UserSpec("bob", 2002, admin=True)))
    assert twice.count("[[users]]") == 2 and parse_spec(twice).users[1].admin
    assert parse_spec(with_users(twice, ())).users == ()


@pytest.mark.parametrize("users, setting, words", [
    ('[[users]]\nname = "alice"\n', "users[0]", "needs a name and a uid"),
    ('[[users]]\nname = "Alice"\nuid = 2001\n', "users[0].name", "not a valid user name"),
    ('[[users]]\nname = "dscluster"\nuid = 2001\n', "users[0].name", "not a valid user name"),
    ('[[users]]\nname = "alice"\nuid = 5\n', "users[0].uid", "out of range"),
    ('[[users]]\nname = "alice"\nuid = 2001\nadmin = "yes"\n', "users[0].admin", "true or false"),
    ('[[users]]\nname = "alice"\nuid = 2001\nhome = "/x"\n', "users[0].home", "unknown key"),
    ('[[users]]\nname = "alice"\nuid = 2001\n[[users]]\nname = "bob"\nuid = 2001\n', "users[1].name", "twice"),
])
def test_a_bad_users_table_is_refused_with_its_line_and_the_fix(users, setting, words):
    with pytest.raises(ConfigError) as err:
        parse_spec(SPEC + "\n" + users, Path("/x/dscluster.toml"))
    assert err.value.setting == setting and words in err.value.message and err.value.hint
    assert "/x/dscluster.toml:" in err.value.message


def test_names_uids_and_keys_are_checked_before_anything_runs(tmp_path):
    spec = replace(parse_spec(SPEC), users=(UserSpec("alice", 2001),))
    for bad in ("Alice", "root", "1x", "a b", "dscluster"):
        with pytest.raises(ConfigError):
            accounts.check_name(bad, spec)
    with pytest.raises(ConfigError, match="taken by alice"):
        accounts.choose_uid(spec, 2001)
    with pytest.raises(ConfigError, match="out of range"):
        accounts.choose_uid(spec, 0)
    assert accounts.choose_uid(spec, None) not in (2001,)
    private = tmp_path / "id"
    private.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n")
    with pytest.raises(ConfigError, match="not one OpenSSH public key"):
        accounts.read_pubkey(private)
    public = tmp_path / "id.pub"
    public.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop\n")
    assert accounts.read_pubkey(public) == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop"
    with pytest.raises(ConfigError, match="cannot read"):
        accounts.read_pubkey(tmp_path / "missing.pub")


def test_the_node_scripts_take_values_as_arguments_and_their_exits_become_sentences():
    argv = accounts.add_argv("alice", 2001, "ssh-ed25519 AAAA x", "/shared", ("ssh-ed25519 AAAA x", "ssh-ed25519 BB c"))
    assert argv[:2] == ["sh", "-c"] and argv[-6:-2] == ["alice", "2001", "ssh-ed25519 AAAA x", "/shared"]
    # their sshd key file: each key restricted as the cluster key is; their record beside it (node/people.py)
    assert argv[-2].splitlines() == ["no-agent-forwarding,no-X11-forwarding ssh-ed25519 AAAA x",
                                     "no-agent-forwarding,no-X11-forwarding ssh-ed25519 BB c"]
    assert argv[-1] == "2001" and accounts.add_argv("bob", 2002, "", "", admin=True)[-1] == "2002 admin"
    assert "PEOPLE_DIR=/etc/dscluster/people" in argv[2] and "HOME_BASE=''" in argv[2]
    assert "HOME_BASE=/var/h" in accounts.add_argv("bob", 2002, "", "", home_base="/var/h")[2]
    assert "alice" not in argv[2] and "AAAA" not in argv[2]  # no value is pasted into the script
    assert "KEYS_DIR=/etc/dscluster/keys" in argv[2]
    made = accounts.identity_argv("alice", "lab", "node0 ssh-ed25519 AAAA\n")
    assert made[-3:] == ["alice", "lab", "node0 ssh-ed25519 AAAA"] and "alice" not in made[2]
    assert accounts.as_root(["id"])[-1] == "id" and "sudo -n" in accounts.as_root(["id"])[2]
    assert accounts.outcome("gpu01", 0, "", "alice").ok
    assert "another uid" in accounts.outcome("gpu01", 3, "dscluster: alice has uid 1500", "alice", 2001).message
    assert "choose another --uid" in accounts.outcome("gpu01", 4, "uid 2001 is bob's", "alice", 2001).message
    assert "cannot act as root" in accounts.outcome("gpu01", 1, "sudo: a password is required", "alice").message
    assert "--record-only" in accounts.manual_steps("alice", 2001, parse_spec(SPEC))


def test_hub_passwords_are_salted_scrypt_hashes_in_a_private_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path))
    one, two = hubpass.hash_password("s3cret"), hubpass.hash_password("s3cret")
    assert one != two and "s3cret" not in one and hubpass.verify("s3cret", one)
    assert not hubpass.verify("s3creT", one) and not hubpass.verify("s3cret", "md5$x") and not hubpass.verify("", "")
    hubpass.set_password("alice", "pw-a")
    assert hubpass.check("alice", "pw-a") and not hubpass.check("alice", "pw-b") and not hubpass.check("bob", "pw-a")
    assert "pw-a" not in hubpass.password_file().read_text()
    assert hubpass.password_file().stat().st_mode & 0o777 == 0o600
    assert hubpass.private_dir().stat().st_mode & 0o777 == 0o700
    assert hubpass.remove_password("alice") and not hubpass.check("alice", "pw-a")


def test_the_hub_config_holds_no_secret_and_spawns_each_persons_lab_with_the_panel(tmp_path):
    layout = HubLayout.at(tmp_path / "hub")
    config = hub_config(layout, "127.0.0.1", HubPorts(8000, 8081, 8001), notebook_dir="/shared", admins=("bob",),
                        environment={"DSCLUSTER_CLUSTER": "/shared/.dscluster/dscluster.toml"})
    hub = config["JupyterHub"]
    assert hub["ip"] == "127.0.0.1" and hub["hub_ip"] == "127.0.0.1"
    assert config["ConfigurableHTTPProxy"]["api_url"] == "http://127.0.0.1:8001"
    assert hub["cookie_secret_file"].startswith(str(layout.private)) and str(layout.private) in hub["db_url"]
    assert hub["authenticator_class"] == "dscluster.node.hubauth.DsclusterAuthenticator"
    assert config["Authenticator"]["admin_users"] == ["bob"]
    assert config["Spawner"]["args"] == [f"--config={layout.singleuser_config}"]
    keys = {key for section in config.values() for key in section}
    assert not keys & {"cookie_secret", "auth_token", "api_token", "crypt_key", "password"}  # files, or JupyterHub's
    tls = hub_config(layout, "0.0.0.0", HubPorts(8000, 8081, 8001), notebook_dir="/s", admins=(), environment={},
                     tls=("/p/tls.crt", "/p/tls.key"))["JupyterHub"]
    assert tls["ssl_cert"] == "/p/tls.crt" and tls["ssl_key"] == "/p/tls.key"
    lab = singleuser_config("/shared", "/settings")
    assert "root_dir" not in lab["ServerApp"] and not lab["ServerApp"]["allow_root"]
    # Each lab opens in its person's own folder, not at the shared root the node user writes; its terminal
    # keeps the PATH the hub hands down (this Python's bin first: `dscluster`), which a login shell resets.
    assert config["Spawner"]["notebook_dir"] == "/shared/users/{username}"
    assert config["Spawner"]["environment"]["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    shell = lab["ServerApp"]["terminado_settings"]["shell_command"]
    assert "-l" not in shell
    # a terminal opened at the lab's root starts in the person's folder, not the home the spawner starts in
    home, folder = tmp_path / "home", tmp_path / "users" / "alice"
    home.mkdir()
    folder.mkdir(parents=True)
    probe = subprocess.run([*shell[:3], "/bin/sh"], input="pwd\n", capture_output=True, text=True, cwd=home,
                           env={"HOME": str(home), "JUPYTERHUB_ROOT_DIR": str(folder), "PATH": "/usr/bin:/bin"})
    assert probe.stdout.split()[-1] == str(folder), probe
    assert "ip" not in lab["ServerApp"] and "port" not in lab["ServerApp"]  # JupyterHub sets them
    assert lab["ServerApp"]["disable_check_xsrf"] is False


def test_the_public_hubs_certificate_is_made_once_with_its_fingerprint(tmp_path):
    pytest.importorskip("cryptography")
    from dscluster.node.hubtls import ensure_certificate, fingerprint

    (cert, key), fp = ensure_certificate(tmp_path)
    assert Path(key).stat().st_mode & 0o777 == 0o600
    assert fp == fingerprint(Path(cert).read_bytes()) and len(fp.split(":")) == 32
    assert ensure_certificate(tmp_path)[1] == fp  # kept: people compared it once


def test_the_proxy_takes_the_tls_options_and_passes_the_rest_on():
    from dscluster.node.hubproxy import split_tls

    assert split_tls(["--ip", "0.0.0.0", "--ssl-key", "/p/k", "--port", "8000", "--ssl-cert=/p/c"]) == (
        "/p/c", "/p/k", ["--ip", "0.0.0.0", "--port", "8000"])
    assert split_tls(["--port", "1"]) == (None, None, ["--port", "1"])


def test_a_hub_in_a_simulated_nodes_pid_namespace_is_found_by_the_pid_it_recorded():
    """`hub url`/`hub stop` on the controller: the hub recorded its pid as its node's pid namespace counts it
    (`sim up --hub`); the controller finds that process, not the one its own namespace numbers the same."""
    import os
    import subprocess
    import time

    from dscluster.node import hub

    if os.geteuid() != 0:
        pytest.skip("needs root (a pid namespace)")
    outer = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sleep", "120"])
    try:
        children = Path(f"/proc/{outer.pid}/task/{outer.pid}/children")
        deadline = time.monotonic() + 30
        while not children.read_text().split() and time.monotonic() < deadline:
            time.sleep(0.1)
        inner = int(children.read_text().split()[0])  # pid 1 of the new namespace
        ns = os.readlink(f"/proc/{inner}/ns/pid")
        assert ns != os.readlink("/proc/self/ns/pid")
        assert hub.host_pid(1, ns) == inner
        assert hub.host_pid(1, "") == 1 and hub.host_pid(os.getpid(), os.readlink("/proc/self/ns/pid")) == os.getpid()
        assert hub.host_pid(2, ns) is None  # nothing else runs there
    finally:
        outer.kill()
        outer.wait()

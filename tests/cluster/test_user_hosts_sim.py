"""`dscluster user add/remove` on real hosts, rehearsed on simulated bare hosts (`sim hosts up`: their own
address and key-only sshd, your ssh as root): the account is made over ssh as root with the UID, the
person's directory on the shared storage by the person themself (the shared dir belongs to the image's
node UID, which has no name on the host); a host that cannot be reached as root is a clear error with
the manual steps, and nothing is recorded. Accounts and hosts are removed at teardown, pass or fail."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from support import VENV_CLI, run_cli

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

TAG = f"{os.getpid() % 100000:05d}"
PERSON = f"hst{TAG}"


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, timeout=300, entry=VENV_CLI, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def hosts():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, sshd, accounts)")
    home = Path(tempfile.mkdtemp(prefix="dsc-hosts-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}
    name = f"uh{TAG}"
    try:
        up = _cli(env, "sim", "hosts", "up", "1", "--name", name)
        assert up.returncode == 0, up.stdout + up.stderr
        address = re.search(r"host0\s+(\S+)", up.stdout).group(1)
        env["DSCLUSTER_HOST_SSH_CONFIG"] = re.search(r"DSCLUSTER_HOST_SSH_CONFIG=(\S+)", up.stdout).group(1)
        shared = re.search(r"shared directory: (\S+)", up.stdout).group(1)
        spec = home / "dscluster.toml"
        spec.write_text(f'[cluster]\nname = "{name}"\nshared_dir = "{shared}"\n\n[[nodes]]\naddress = "{address}"\n'
                        "slots = 1\n")
        yield {"env": env, "spec": str(spec), "shared": Path(shared), "home": home}
    finally:
        _cli(env, "sim", "hosts", "down", "--name", name)
        subprocess.run(["userdel", "--remove", PERSON], capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)


def test_a_person_is_made_on_the_hosts_over_ssh_as_root_and_removed(hosts):
    env, spec = hosts["env"], hosts["spec"]
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hosts["home"] / "k")], check=True)
    add = _cli(env, "user", "add", PERSON, "--key", str(hosts["home"] / "k.pub"), "--cluster", spec)
    assert add.returncode == 0, add.stdout + add.stderr
    entry = pwd.getpwnam(PERSON)
    own = hosts["shared"] / "users" / PERSON
    assert own.stat().st_uid == entry.pw_uid and own.stat().st_mode & 0o777 == 0o755
    assert (hosts["shared"] / "users").stat().st_mode & 0o1777 == 0o1777  # sticky: no one removes another's
    assert f'name = "{PERSON}"' in Path(spec).read_text()
    again = _cli(env, "user", "add", PERSON, "--cluster", spec)
    assert again.returncode != 0 and "already exists" in again.stderr
    gone = _cli(env, "user", "remove", PERSON, "--cluster", spec)
    assert gone.returncode == 0, gone.stderr
    with pytest.raises(KeyError):
        pwd.getpwnam(PERSON)
    assert PERSON not in Path(spec).read_text() and own.is_dir()  # their directory is kept


def test_a_host_that_cannot_be_reached_as_root_is_a_clear_error_with_the_manual_steps(hosts):
    spec = Path(hosts["home"]) / "unreachable.toml"
    spec.write_text(f'[cluster]\nname = "nowhere"\nshared_dir = "{hosts["shared"]}"\n\n[[nodes]]\naddress = "127.0.0.1"\n'
                    "slots = 1\nssh_port = 9\n")
    env = {**hosts["env"], "DSCLUSTER_HOST_SSH_CONFIG": "/dev/null"}  # port 22 of this machine: no sshd as root here
    out = _cli(env, "user", "add", PERSON, "--cluster", str(spec))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "could not make the accounts" in out.stderr and "useradd --uid" in out.stderr
    assert "--record-only" in out.stderr and PERSON not in spec.read_text()

"""The published spec (<shared>/.dscluster/dscluster.toml) lies in a directory the node user can write: what it
says never makes anyone a hub admin, and a person's launch never takes its Python from a copy the node user
made (cluster/spec.py as_person, node/agent.py hub_people). Made for real as root with another uid writing."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from dscluster.cluster.spec import load_spec, resolve_spec
from dscluster.errors import PermissionNeeded
from dscluster.node import agent

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to write as another user")
NODE, ALICE = 54341, 2001


@pytest.fixture
def shared():
    path = Path(tempfile.mkdtemp(prefix="dsc-published-", dir="/var/tmp"))
    path.chmod(0o755)
    meta = path / ".dscluster"
    meta.mkdir()
    os.chown(path, NODE, NODE)  # the simulated cluster's layout: the shared dir and .dscluster/ the node user's
    os.chown(meta, NODE, NODE)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _spec_text(shared: Path, extra: str = "", users: str = '[[users]]\nname = "alice"\nuid = 2001\n') -> str:
    return (f'[cluster]\nname = "lab"\nshared_dir = "{shared}"\n{extra}\n[[nodes]]\naddress = "10.0.0.1"\n'
            f'slots = 1\n\n{users}')


def _plant(shared: Path, text: str) -> Path:
    """As the node user: its own file renamed over the published spec (it owns the directory)."""
    published = shared / ".dscluster" / "dscluster.toml"
    done = subprocess.run(["setpriv", f"--reuid={NODE}", f"--regid={NODE}", "--clear-groups", "sh", "-c",
                           'cat > "$1.tmp" && mv -f "$1.tmp" "$1"', "sh", str(published)], input=text, text=True,
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return published


def test_a_persons_launch_never_takes_python_from_the_node_users_copy(shared, monkeypatch, tmp_path):
    published = shared / ".dscluster" / "dscluster.toml"
    published.write_text(_spec_text(shared))  # as `sim up` / `user add` publish it: root's, 0644
    published.chmod(0o644)
    real = pwd.getpwuid
    monkeypatch.setattr(os, "geteuid", lambda: ALICE)  # alice's launch from her JupyterLab
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: SimpleNamespace(pw_name="alice") if uid == ALICE else real(uid))
    spec = resolve_spec(str(published))
    assert spec.ssh_user == "alice" and spec.python != "/var/tmp/evil"
    _plant(shared, _spec_text(shared, 'python = "/var/tmp/evil"\n'))
    with pytest.raises(PermissionNeeded, match=f"not root's .or yours. alone .uid {NODE}"):
        resolve_spec(str(published))
    # a hostfile of hers takes its SSH settings and Python from the spec the hub names: the same check
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("10.0.0.1 slots=1\n")
    monkeypatch.setenv("DSCLUSTER_CLUSTER", str(published))
    with pytest.raises(PermissionNeeded, match=f"uid {NODE}"):
        resolve_spec(str(hostfile))


def test_hub_admins_come_from_roots_records_not_the_published_spec(shared, tmp_path):
    records = tmp_path / "etc" / "people"  # root's records, as `user add` writes them
    records.mkdir(parents=True)
    for folder in (records.parent, records):
        folder.chmod(0o755)
    (records / "alice").write_text("2001\n")
    (records / "bob").write_text("2002 admin\n")
    published = _plant(shared, _spec_text(shared, users='[[users]]\nname = "alice"\nuid = 2001\nadmin = true\n\n'
                                                         '[[users]]\nname = "bob"\nuid = 2002\n\n'
                                                         '[[users]]\nname = "mallory"\nuid = 2003\nadmin = true\n'))
    people = agent.hub_people(published, load_spec, records)
    assert sorted((p.name, p.admin) for p in people) == [("alice", False), ("bob", True)]


def test_a_spec_planted_where_root_stands_is_refused(shared, monkeypatch):
    """Root runs dscluster in the shared dir (the node user's): a ./dscluster.toml the node user put there would
    name the admins, the nodes and the shared dir of root's `user add`, `hub start`, `launch`."""
    done = subprocess.run(["setpriv", f"--reuid={NODE}", f"--regid={NODE}", "--clear-groups", "sh", "-c",
                           'cat > "$1"', "sh", str(shared / "dscluster.toml")],
                          input=_spec_text(shared, users='[[users]]\nname = "mallory"\nuid = 2003\nadmin = true\n'),
                          text=True, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    monkeypatch.chdir(shared)
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    with pytest.raises(PermissionNeeded, match=f"uid {NODE}"):
        resolve_spec(None)

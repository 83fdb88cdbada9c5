"""`dscluster init` and `dscluster config`: spec + identity from the command line, bad flags named."""

from __future__ import annotations

import shutil
import stat

import pytest

from dscluster import cli
from dscluster.cluster.spec import load_spec
from dscluster.errors import ExitCode

pytestmark = pytest.mark.skipif(not shutil.which("ssh-keygen"), reason="needs ssh-keygen (openssh-client)")


def test_init_writes_spec_identity_and_public_key(tmp_path, monkeypatch, capsys, dscluster_home):
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    rc = cli.main(["init", "--name", "lab", "--node", "10.0.0.1:8", "--node", "gpu02", "--shared", str(shared),
                   "--user", "trainer", "--port", "2200", "--launcher", "openmpi", "--interface", "ib0"])
    out = capsys.readouterr().out
    assert rc == 0, out
    spec = load_spec(tmp_path / "dscluster.toml")
    assert [(n.address, n.slots) for n in spec.nodes] == [("10.0.0.1", 8), ("gpu02", 1)]
    assert (spec.name, spec.ssh_user, spec.ssh_port, spec.launcher, spec.network_interface) == \
        ("lab", "trainer", 2200, "openmpi", "ib0")
    key = dscluster_home / "clusters" / "lab" / "id_ed25519"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert (shared / ".dscluster" / "cluster.pub").read_text() == key.with_name("id_ed25519.pub").read_text()
    assert "dscluster node start --shared" in out and "Next:" in out
    # A second init refuses to overwrite; --force keeps the identity.
    before = key.read_text()
    assert cli.main(["init", "--node", "a", "--shared", str(shared)]) == ExitCode.USAGE
    assert "--force" in capsys.readouterr().err
    assert cli.main(["init", "--name", "lab", "--node", "a:2", "--shared", str(shared), "--force"]) == 0
    assert key.read_text() == before and load_spec(tmp_path / "dscluster.toml").world_size == 2


def test_init_from_hostfile(tmp_path, monkeypatch, capsys, dscluster_home):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hostfile").write_text("# gpus\nnode0 slots=4\nnode1 slots=4\n")
    rc = cli.main(["init", "--hostfile", "hostfile", "--shared", "/nfs/not-mounted-here", "-o", "c.toml"])
    out = capsys.readouterr().out
    assert rc == 0
    assert load_spec(tmp_path / "c.toml").hostfile_text() == "node0 slots=4\nnode1 slots=4\n"
    assert "not mounted here" in out and "cluster.pub" in out


@pytest.mark.parametrize("args,words", [
    (["--node", "a:0"], ["--node 'a:0'", "1 or more"]),
    (["--node", "a:x"], ["whole number"]),
    (["--node", "a", "--user", "root"], ["--user: root is not allowed"]),
    (["--node", "a", "--port", "0"], ["--port:", "out of range"]),
    (["--node", "a", "--launcher", "mpi"], ["--launcher: unknown launcher"]),
    (["--node", "a", "--name", "bad name"], ["--name:"]),
    (["--node", "a", "--node", "a"], ["--node:", "listed twice"]),
    (["--node", "me@a"], ["--node:", "ssh_user"]),
    ([], ["--node HOST[:SLOTS]", "--hostfile"]),
])
def test_init_bad_flags(tmp_path, monkeypatch, capsys, dscluster_home, args, words):
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["init", "--shared", "/shared", *args])
    err = capsys.readouterr().err
    assert rc == ExitCode.USAGE, err
    for w in words:
        assert w in err, (w, err)
    assert "fix:" in err and "Traceback" not in err
    assert not (tmp_path / "dscluster.toml").exists()


def test_init_relative_shared_dir_refused(tmp_path, monkeypatch, capsys, dscluster_home):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init", "--node", "a", "--shared", "rel/dir"]) == ExitCode.USAGE
    assert "--shared: 'rel/dir' is not an absolute path" in capsys.readouterr().err


def test_config_show_and_hostfile(tmp_path, monkeypatch, capsys, dscluster_home):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init", "--node", "n0:2", "--node", "n1:3", "--shared", str(tmp_path)]) == 0
    capsys.readouterr()
    assert cli.main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "world_size" in out and "n1" in out and "master" in out
    assert cli.main(["config", "show", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["world_size"] == 5 and data["identity_exists"] and [n["name"] for n in data["nodes"]] == ["n0", "n1"]
    assert cli.main(["config", "hostfile"]) == 0
    assert capsys.readouterr().out == "n0 slots=2\nn1 slots=3\n"
    assert cli.main(["config", "hostfile", "-o", "hf"]) == 0
    assert (tmp_path / "hf").read_text() == "n0 slots=2\nn1 slots=3\n"
    assert cli.main(["config", "hostfile", "-o", "hf"]) == 0  # regenerating a hostfile is routine
    spec_text = (tmp_path / "dscluster.toml").read_text()
    assert cli.main(["config", "hostfile", "-o", "dscluster.toml"]) == ExitCode.USAGE  # anything else is kept
    assert "not a DeepSpeed hostfile" in capsys.readouterr().err
    assert (tmp_path / "dscluster.toml").read_text() == spec_text
    assert cli.main(["config", "trust"]) == ExitCode.USAGE
    assert cli.main(["config", "trust", "nope"]) == ExitCode.CONFIG

"""dscluster.toml: typed, validated, every bad input named by line, key and fix; resolve_spec order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dscluster import cli
from dscluster.cluster import spec as spec_module
from dscluster.cluster.spec import (
    ClusterSpec,
    NodeSpec,
    format_spec,
    load_spec,
    parse_spec,
    resolve_spec,
    spec_from_hostfile,
)
from dscluster.errors import ConfigError, ExitCode, HostfileError

GOOD = """\
[cluster]
name = "lab"
shared_dir = "/shared"
ssh_user = "trainer"
ssh_port = 2200
launcher = "openmpi"
network_interface = "ib0"

[[nodes]]
address = "10.0.0.1"
slots = 8
name = "gpu01"

[[nodes]]
address = "10.0.0.2"
slots = 4
ssh_port = 2222
"""


def test_good_spec_is_typed():
    spec = parse_spec(GOOD, Path("/x/dscluster.toml"))
    assert spec == ClusterSpec(name="lab", shared_dir=Path("/shared"), ssh_user="trainer", ssh_port=2200,
                               launcher="openmpi", network_interface="ib0", path=Path("/x/dscluster.toml"),
                               nodes=(NodeSpec("10.0.0.1", 8, "gpu01", 2200),
                                      NodeSpec("10.0.0.2", 4, "10.0.0.2", 2222)))
    assert spec.master.name == "gpu01" and spec.world_size == 12
    assert spec.hostfile_text() == "gpu01 slots=8\n10.0.0.2 slots=4\n"
    assert spec.node("10.0.0.1").name == "gpu01"
    with pytest.raises(ConfigError, match="no node 'x'"):
        spec.node("x")


def test_defaults():
    spec = parse_spec('[cluster]\nshared_dir = "/s"\n[[nodes]]\naddress = "a"\nslots = 1\n')
    assert (spec.name, spec.ssh_user, spec.ssh_port, spec.launcher, spec.network_interface) == \
        ("default", "dscluster", 2222, "pdsh", None)


def test_format_round_trips():
    spec = parse_spec(GOOD, None)
    assert parse_spec(format_spec(spec), None) == spec


def _edit(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


# (text, line, setting, words in message, words in fix)
BAD = [
    (_edit('name = "lab"', 'name = lab'), 2, "toml", ["not valid TOML", "line 2"], ["quotes"]),
    (_edit("[cluster]", "[clustr]"), 1, "clustr", ["unknown key 'clustr'"], ["did you mean 'cluster'"]),
    (_edit('shared_dir = "/shared"', 'shared_dri = "/shared"'), 3, "cluster.shared_dri", ["unknown key"],
     ["did you mean 'shared_dir'"]),
    (_edit("slots = 4", "slot = 4"), 16, "nodes[1].slot", ["unknown key 'slot'"], ["did you mean 'slots'"]),
    (_edit("ssh_port = 2222", "port = 2222"), 17, "nodes[1].port", ["unknown key 'port'"], ["ssh_port"]),
    (_edit('launcher = "openmpi"', 'launcher = "openmp"'), 6, "cluster.launcher", ["unknown launcher"],
     ["did you mean 'openmpi'"]),
    (_edit('shared_dir = "/shared"\n', ''), None, "cluster.shared_dir", ["shared_dir is missing"], ["NFS"]),
    (_edit('"/shared"', '"shared"'), 3, "cluster.shared_dir", ["not an absolute path"], ["/shared"]),
    (_edit('"trainer"', '"root"'), 4, "cluster.ssh_user", ["root is not allowed"], ["non-root"]),
    (_edit('"trainer"', '"Bad User"'), 4, "cluster.ssh_user", ["not a valid user name"], ["lower-case"]),
    (_edit("ssh_port = 2200", "ssh_port = 70000"), 5, "cluster.ssh_port", ["out of range"], ["1 to 65535"]),
    (_edit("ssh_port = 2200", 'ssh_port = "2200"'), 5, "cluster.ssh_port", ["whole number"], ["without quotes"]),
    (_edit('"ib0"', '"eth 0"'), 7, "cluster.network_interface", ["not a network interface"], ["ip -br addr"]),
    (_edit("slots = 8", "slots = 0"), 11, "nodes[0].slots", ["out of range"], ["1 to 1024"]),
    (_edit("slots = 8", 'slots = "8"'), 11, "nodes[0].slots", ["whole number"], ["without quotes"]),
    (_edit("slots = 8", "slots = true"), 11, "nodes[0].slots", ["whole number"], []),
    (_edit("slots = 8\n", ""), 9, "nodes[0]", ["slots is missing"], ["slots = N"]),
    (_edit('address = "10.0.0.1"\n', ""), 9, "nodes[0]", ["address is missing"], ["address ="]),
    (_edit('"10.0.0.2"', '"10.0.0.1"'), 15, "nodes[1].address", ["listed twice", "nodes 0 and 1"], ["duplicate"]),
    (_edit('"10.0.0.2"', '"gpu01"'), 15, "nodes[1].address", ["'gpu01' is listed twice"], []),
    (_edit('"10.0.0.2"', '"trainer@10.0.0.2"'), 15, "nodes[1].address", ["ssh_user"], []),
    (_edit('"10.0.0.2"', '"10.0.0.2 10.0.0.3"'), 15, "nodes[1].address", ["not a host name"], []),
    (_edit('"10.0.0.2"', '"1:2:3"'), 15, "nodes[1].address", ["not a valid IP address"], []),
    ("[cluster]\nshared_dir = \"/s\"\n", None, "nodes", ["no nodes"], ["[[nodes]]"]),
    ('nodes = 3\n[cluster]\nshared_dir = "/s"\n', 1, "nodes", ["[[nodes]] tables"], []),
    ('[[nodes]]\naddress = "a"\nslots = 1\n', None, "cluster", ["[cluster] table is missing"], ["[cluster]"]),
    (_edit('name = "lab"', 'name = "-lab"'), 2, "cluster.name", ["not a valid cluster name"], ["letters"]),
]


@pytest.mark.parametrize("text,line,setting,words,fix_words", BAD)
def test_bad_spec_names_line_key_and_fix(tmp_path, text, line, setting, words, fix_words):
    path = tmp_path / "dscluster.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_spec(path)
    err = exc.value
    assert err.exit_code == ExitCode.CONFIG
    where = f"{path.resolve()}:{line}: " if line and setting != "toml" else f"{path.resolve()}: "
    assert err.message.startswith(where), err.message
    if setting != "toml":
        assert err.setting == setting and f"{setting}: " in err.message
    for w in words:
        assert w in err.message, (w, err.message)
    assert err.hint
    for w in fix_words:
        assert w in err.hint, (w, err.hint)


def test_missing_and_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist") as exc:
        load_spec(tmp_path / "nope.toml")
    assert "dscluster init" in exc.value.hint


def test_cli_shows_bad_spec_without_traceback(tmp_path, capsys, dscluster_home):
    path = tmp_path / "dscluster.toml"
    path.write_text(_edit("slots = 4", "slot = 4"))
    assert cli.main(["config", "show", "--cluster", str(path)]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    assert f"{path.resolve()}:16: nodes[1].slot: unknown key 'slot'" in err
    assert "did you mean 'slots'" in err and "Traceback" not in err


# --- resolve_spec: --cluster ARG > $DSCLUSTER_CLUSTER > ./dscluster.toml > the simulated cluster "default" ---

def _spec_file(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(GOOD.replace('name = "lab"', f'name = "{name}"'))
    return path


def test_resolve_order(tmp_path, monkeypatch, dscluster_home):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    with pytest.raises(ConfigError, match="no cluster spec found") as exc:
        resolve_spec(None)
    assert "dscluster init" in exc.value.hint and "sim up" in exc.value.hint
    _spec_file(dscluster_home / "sims" / "default" / "dscluster.toml", "simdefault")
    runtime = tmp_path / "run"
    monkeypatch.setattr(spec_module, "SIM_RUNTIME_ROOT", runtime)
    with pytest.raises(ConfigError, match="no cluster spec found"):
        resolve_spec(None)  # its spec is there, but the simulated cluster is not up
    (runtime / "default").mkdir(parents=True)
    (runtime / "default" / "state.json").write_text("{}")
    assert resolve_spec(None).name == "simdefault"
    _spec_file(tmp_path / "dscluster.toml", "cwd")
    assert resolve_spec(None).name == "cwd"
    monkeypatch.setenv("DSCLUSTER_CLUSTER", str(_spec_file(tmp_path / "env" / "x.toml", "env")))
    assert resolve_spec(None).name == "env"
    assert resolve_spec(str(_spec_file(tmp_path / "arg" / "y.toml", "arg"))).name == "arg"
    _spec_file(tmp_path / "dir" / "dscluster.toml", "indir")
    assert resolve_spec(str(tmp_path / "dir")).name == "indir"  # a directory means its dscluster.toml
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_spec(str(tmp_path / "missing"))


def test_hostfile_accepted_where_a_spec_is(tmp_path, monkeypatch, dscluster_home):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("nodeA slots=2\nnodeB slots=1\n")
    spec = resolve_spec(str(hostfile))
    assert [(n.name, n.address, n.slots) for n in spec.nodes] == [("nodeA", "nodeA", 2), ("nodeB", "nodeB", 1)]
    assert spec.name == "hostfile" and spec.world_size == 3 and spec.ssh_user == "dscluster"
    # With a spec around, its settings apply and known nodes keep their address and port.
    _spec_file(tmp_path / "dscluster.toml", "lab")
    hostfile.write_text("10.0.0.2 slots=1\ngpu01 slots=2\n")
    spec = resolve_spec(str(hostfile))
    assert spec.name == "lab" and spec.ssh_user == "trainer" and spec.shared_dir == Path("/shared")
    assert [(n.name, n.address, n.slots, n.ssh_port) for n in spec.nodes] == \
        [("10.0.0.2", "10.0.0.2", 1, 2222), ("gpu01", "10.0.0.1", 2, 2200)]
    hostfile.write_text("node0 slots = 2\n")
    with pytest.raises(HostfileError, match="no spaces"):
        resolve_spec(str(hostfile))


def test_spec_from_hostfile_without_base(tmp_path):
    hf = tmp_path / "my hosts"
    hf.write_text("a slots=1\n")
    spec = spec_from_hostfile(hf)
    assert spec.name == "my-hosts" and spec.path == hf.resolve()
    assert os.path.isabs(spec.shared_dir)


def test_unwritable_outputs_are_named_without_traceback(tmp_path, capsys, dscluster_home, monkeypatch):
    # -o below a regular file: a usage error naming the path, not a FileNotFoundError traceback
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    missing = blocker / "dscluster.toml"
    args = ["init", "--name", "qa", "--node", "10.0.0.1:2", "--shared", "/shared", "-o"]
    assert cli.main(args + [str(missing)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"cannot write {missing}" in err and "-o FILE" in err and "Traceback" not in err
    out = tmp_path / "dscluster.toml"
    assert cli.main(["config", "hostfile", "--cluster", str(out), "-o", str(missing)]) == ExitCode.CONFIG  # no spec yet
    assert cli.main(args + [str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["config", "hostfile", "--cluster", str(out), "-o", str(missing)]) == ExitCode.USAGE
    assert f"cannot write {missing}" in capsys.readouterr().err
    # a DSCLUSTER_HOME that cannot hold the identity: named, and no spec written without its key
    monkeypatch.setenv("DSCLUSTER_HOME", str(blocker / "home"))
    other = tmp_path / "other.toml"
    assert cli.main(args[:2] + ["qa2"] + args[3:] + [str(other)]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    assert "cannot create the cluster's SSH identity" in err and "DSCLUSTER_HOME" in err
    assert not other.exists()

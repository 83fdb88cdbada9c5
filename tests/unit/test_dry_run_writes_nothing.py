"""A dry run writes nothing anywhere: every command that takes --dry-run (launch with --local, --cluster,
--hostfile, --skip-doctor, under Slurm; demo) leaves the state directory (DSCLUSTER_HOME: the cluster's
identity, ssh_config, pinned host keys) and the shared directory exactly as they were, file by file and byte
by byte. The reported case: `launch --hostfile F --dry-run` with a host that does not resolve rewrote the
cluster's ssh_config (doctor's pre-flight wrote the ssh files for the hostfile's nodes first)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dscluster import cli
from dscluster.cluster.spec import resolve_spec
from dscluster.cluster.ssh import ensure_ssh_files, ssh_config_path, ssh_files_current

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")


def _snapshot(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if "logs" in p.relative_to(root).parts[:1]:
                continue  # the CLI's own log of errors (DSCLUSTER_HOME/logs), not state
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


@pytest.fixture
def cluster(tmp_path, dscluster_home, monkeypatch):
    """A cluster made by `dscluster init` whose ssh files were written once (as any real use does)."""
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    spec = tmp_path / "dscluster.toml"
    assert cli.main(["init", "--node", "127.0.0.1", "--shared", str(shared), "--name", "dry", "-o", str(spec),
                     "--force"]) == 0
    ensure_ssh_files(resolve_spec(str(spec)))
    return spec, shared


def test_every_dry_run_leaves_the_state_and_shared_directories_as_they_were(cluster, tmp_path, dscluster_home,
                                                                              capsys):
    spec, shared = cluster
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("127.0.0.1 slots=1\nno-such-host.invalid slots=1\n")
    config_before = ssh_config_path(resolve_spec(str(spec))).read_text()
    runs = [
        ["launch", "--hostfile", str(hostfile), "--dry-run", SCRIPT],  # the reported case
        ["launch", "--hostfile", str(hostfile), "--skip-doctor", "--dry-run", SCRIPT],
        ["launch", "--cluster", str(spec), "--skip-doctor", "--dry-run", SCRIPT],
        ["launch", "--local", "1", "--dry-run", SCRIPT],
        ["launch", "--launcher", "slurm", "--nodes", "1", "--ntasks-per-node", "1", "--dry-run", SCRIPT],
        ["demo", "--dry-run", "--cpu", "--steps", "3"],
    ]
    for argv in runs:
        before = _snapshot(dscluster_home, shared, tmp_path / "dscluster.toml")
        code = cli.main(argv)
        out = capsys.readouterr()
        assert "Traceback" not in out.out + out.err, (argv, out.err)
        assert code in (0, 4), (argv, code, out.err)  # printed, or refused by the pre-flight: never written
        assert _snapshot(dscluster_home, shared, tmp_path / "dscluster.toml") == before, argv
    assert ssh_config_path(resolve_spec(str(spec))).read_text() == config_before
    assert "no-such-host.invalid" not in config_before


def test_a_dry_run_that_cannot_reach_the_nodes_without_writing_says_so(cluster, tmp_path, capsys):
    spec, _ = cluster
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("127.0.0.1 slots=1\nno-such-host.invalid slots=1\n")
    assert not ssh_files_current(resolve_spec(str(hostfile)))  # a new node: the ssh files would change
    assert ssh_files_current(resolve_spec(str(spec)))
    assert cli.main(["launch", "--hostfile", str(hostfile), "--dry-run", SCRIPT]) == 0
    err = capsys.readouterr().err
    assert "a dry run writes nothing" in err and "no-such-host.invalid" in err and "dscluster doctor" in err

"""The next-step hints of `dscluster sim` name the cluster whenever a plain command would pick another."""

from __future__ import annotations

from dscluster.commands.sim import doctor_hint


def test_plain_doctor_only_where_it_resolves_to_the_simulated_default(tmp_path, monkeypatch):
    spec = tmp_path / "sims" / "default" / "dscluster.toml"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    assert doctor_hint("default", spec) == "dscluster doctor"
    assert doctor_hint("qa", spec) == f"dscluster doctor --cluster {spec}"
    # a ./dscluster.toml (or $DSCLUSTER_CLUSTER) comes first in resolve_spec: plain doctor would check that one
    (tmp_path / "dscluster.toml").write_text("")
    assert doctor_hint("default", spec) == f"dscluster doctor --cluster {spec}"
    (tmp_path / "dscluster.toml").unlink()
    monkeypatch.setenv("DSCLUSTER_CLUSTER", "/etc/other.toml")
    assert doctor_hint("default", spec) == f"dscluster doctor --cluster {spec}"

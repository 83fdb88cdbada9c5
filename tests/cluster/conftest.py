"""Fixtures for tests on the simulated multi-node cluster (root only: network namespaces, sshd).

    @pytest.fixture(scope="module")
    def sim(sim_cluster):
        return sim_cluster(3, name="h4launch")     # a SimCluster; torn down (purged) after the module

`sim_cluster(n, name=None, subnet=None, slots=1, shared_dir=None)`: name defaults to one derived from
the test module (unique, ≤ 20 chars); pass your own short unique name to recognise it in `ip netns`.
The cluster's home (spec, identity, shared dir, logs) is a fresh directory under /var/tmp that the
non-root node user can traverse (pytest's tmp dirs are 0700); the spec is self-contained
(`sim.spec.path`, `sim.spec.state_dir`), so tests need no DSCLUSTER_HOME.
Node logs (sshd, VERBOSE) are in `sim.log_path("node1")`; on failure the tail is printed.

The command line (support.run_cli) against the module's `sim`: the `env` fixture is its environment
(this process's, a fresh DSCLUSTER_HOME, no DSCLUSTER_SHARED: the spec names the shared dir), the `cli`
fixture a polling.SimCli over both. A module that needs more overrides them by name, asking for the
shared one: `def env(env): return {**env, "DSCLUSTER_LANG": "en"}`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def sim_cluster(request):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, sshd)")
    from dscluster.sim import SimCluster, down

    home = Path(tempfile.mkdtemp(prefix="dsc-sim-", dir="/var/tmp"))
    os.chmod(home, 0o755)  # the node user must traverse it to reach the shared dir
    created: list[str] = []
    module_tag = hashlib.sha1(request.module.__name__.encode()).hexdigest()[:8]

    def factory(n: int = 3, name: str | None = None, **kwargs) -> SimCluster:
        name = name or f"t{module_tag}{len(created)}"
        # DSCLUSTER_SIM_SALT (a letter or two) keeps two checkouts' runs of one module on apart clusters
        name = (name + os.environ.get("DSCLUSTER_SIM_SALT", ""))[:20]
        created.append(name)  # before up: a failed up still leaves things to remove
        return SimCluster.up(name, n, home=home, **kwargs)

    try:
        yield factory
    finally:
        for name in created:
            try:
                down(name, purge=True)
            except Exception as err:  # noqa: BLE001 - keep tearing down the others
                print(f"sim_cluster: down({name}) failed: {err}")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = dict(os.environ)
    e["DSCLUSTER_HOME"] = str(tmp_path_factory.mktemp("home"))
    e.pop("DSCLUSTER_SHARED", None)
    return e


@pytest.fixture(scope="module")
def cli(sim, env):
    from polling import SimCli

    return SimCli(sim, env)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failed cluster test, attach the tail of every node agent's log (sshd says why it refused)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for name in item.fixturenames:
        value = item.funcargs.get(name)
        if value is not None and type(value).__name__ == "SimCluster":
            for node in value.nodes:
                try:
                    tail = value.log_path(node).read_text(errors="replace").splitlines()[-15:]
                except OSError:
                    continue
                report.sections.append((f"{value.name}/{node} agent log (tail)", "\n".join(tail)))

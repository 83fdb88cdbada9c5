"""doctor on a real 3-node simulated cluster (network namespaces, real sshd, pinned keys): all
green including a real all-reduce, then broken one way at a time; each time doctor must name the
node, the check and the fix, and never hang."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from support import run_cli

from dscluster.doctor import run_doctor

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

NAME = "h3doctor"
WAIT_S = 3.0


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name=NAME)


def doctor(spec, **kw):
    return run_doctor(spec, wait_s=WAIT_S, **kw)


def cli(spec, *args, timeout=300):
    """`dscluster doctor --cluster SPEC ARGS` in English (support.run_cli)."""
    return run_cli("doctor", "--cluster", str(spec.path), *args, timeout=timeout, env={**os.environ, "DSCLUSTER_LANG": "en"})


def problem(report, node, check, *words):
    """The failed result for (node, check), after checking it names every word (finding or fix)."""
    result = report.get(node, check)
    assert result is not None and not result.ok, (node, check, [(r.node, r.check, r.finding) for r in report.failures])
    text = f"{result.finding} | {result.fix}"
    for word in words:
        assert word in text, (word, text)
    assert result.fix, result
    return result


def close_mux(spec, node):
    """Drop the ssh ControlMaster connection so the next call re-does the handshake (host key check)."""
    from dscluster.cluster.ssh import ssh_config_path

    subprocess.run(["ssh", "-F", str(ssh_config_path(spec)), "-O", "exit", node], capture_output=True, timeout=10)


def wait_listening(address, port, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {address}:{port} after {timeout} s")


def test_green_cluster_with_collective(sim):
    proc = cli(sim.spec, "--collective", "--json")
    data = json.loads(proc.stdout)
    bad = [(r["node"], r["check"], r["finding"]) for r in data["results"] if r["status"] == "fail"]
    assert proc.returncode == 0 and data["ok"], (bad, proc.stderr[-2000:])
    assert {r["node"] for r in data["results"]} == {"node0", "node1", "node2", "cluster"}
    coll = [r for r in data["results"] if r["check"] == "collective"][0]
    assert coll["status"] == "ok" and coll["details"]["world_size"] == 3 and coll["details"]["busbw_gbs"] > 0
    assert data["summary"]["socket_ifname"] == "eth0"

    text = cli(sim.spec)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "node2" in text.stdout and "checks passed" in text.stdout and "Next:" in text.stdout


def test_partitioned_node_is_named_quickly(sim):
    sim.partition("node1")
    try:
        started = time.monotonic()
        report = doctor(sim.spec)
        elapsed = time.monotonic() - started
    finally:
        sim.heal("node1")
    assert elapsed < 40, elapsed  # bounded by the probe deadline, not by TCP's 15-minute give-up
    ssh = problem(report, "node1", "ssh")
    assert ssh.details["reason"] in ("timeout", "unreachable"), ssh
    assert "network" in ssh.fix
    problem(report, "node1", "reach", "node0")
    assert report.get("node0", "ssh").ok and report.get("node2", "shared").ok


def test_shared_dir_hidden_on_one_node(sim, tmp_path):
    empty = tmp_path / "not-shared"
    empty.mkdir()
    empty.chmod(0o777)
    shared = str(sim.spec.shared_dir)
    sim.exec("node2", ["mount", "--bind", str(empty), shared])  # only in node2's mount namespace
    try:
        report = doctor(sim.spec)
    finally:
        sim.exec("node2", ["umount", shared])
    problem(report, "node2", "shared", "node2", "not the same directory", "mount the same shared storage")
    assert report.get("node1", "shared").ok
    assert [r.node for r in report.failures] == ["node2"]


def test_more_slots_than_cores(sim):
    cores = len(os.sched_getaffinity(0))
    nodes = list(sim.spec.nodes)
    nodes[1] = replace(nodes[1], slots=cores + 3)
    report = doctor(replace(sim.spec, nodes=tuple(nodes)))
    problem(report, "node1", "slots", f"slots = {cores + 3}", f"slots ≤ {cores}", "dscluster.toml")
    assert [(r.node, r.check) for r in report.failures] == [("node1", "slots")]


def test_master_port_in_use(sim):
    port = 29500
    # SO_REUSEADDR like torch's TCPStore: earlier doctor runs leave TIME_WAIT sockets on this port.
    holder = ("import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
              "s.bind(('0.0.0.0',%d))\ns.listen(8)\ntime.sleep(120)\n" % port)
    out = sim.exec("node0", ["sh", "-c", f"{sys.executable} -c \"{holder}\" >/dev/null 2>&1 & echo $!"])
    pid = out.stdout.strip().splitlines()[-1]
    try:
        wait_listening(sim.spec.nodes[0].address, port)
        report = doctor(sim.spec, master_port=port)
    finally:
        sim.exec("node0", ["kill", pid])
    problem(report, "node0", "port", f"port {port} is already in use on node0", "--master-port")
    assert [(r.node, r.check) for r in report.failures] == [("node0", "port")]


def test_swapped_host_key(sim, tmp_path):
    from dscluster.cluster.ssh import known_hosts_path

    path = known_hosts_path(sim.spec)
    original = path.read_text()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True)
    impostor = (tmp_path / "k.pub").read_text().split()
    lines = [f"node2 {impostor[0]} {impostor[1]}" if ln.startswith("node2 ") else ln for ln in original.splitlines()]
    path.write_text("\n".join(lines) + "\n")
    close_mux(sim.spec, "node2")
    try:
        report = doctor(sim.spec)
    finally:
        path.write_text(original)
        close_mux(sim.spec, "node2")
    problem(report, "node2", "ssh", "CHANGED", "dscluster config trust node2")
    assert [(r.node, r.check) for r in report.failures] == [("node2", "ssh")]


def test_stopped_sshd_last(sim):
    """Last: the node stays down for the rest of the module."""
    sim.crash("node2")
    proc = cli(sim.spec)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "node2 · ssh: connection refused" in proc.stdout
    assert "dscluster node start" in proc.stdout
    assert "failed on node2" in proc.stdout

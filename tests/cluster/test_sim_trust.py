"""A real 3-node simulated cluster: key-only sshd with pinned host keys, and what it refuses.

Every assertion goes through the real OpenSSH client and server: nothing here is mocked.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import run_cli

from dscluster.cluster import identity
from dscluster.cluster.pdsh import pdsh_argv, pdsh_env
from dscluster.cluster.ssh import SSHRunner, ssh_base_argv, ssh_config_path, ssh_failure, sync_known_hosts
from dscluster.errors import ClusterError

pytestmark = [pytest.mark.root, pytest.mark.cluster]

NAME = "h2trust"


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name=NAME)


def ssh(sim, node, *command, extra=(), timeout=20):
    spec = sim.spec
    argv = ssh_base_argv(spec, spec.node(node))
    return subprocess.run(argv[:-1] + list(extra) + [argv[-1], "--", *command], capture_output=True, text=True,
                          timeout=timeout)


def close_mux(sim, node):
    """Drop the ControlMaster connection so the next ssh does a full handshake (host key, auth)."""
    subprocess.run(["ssh", "-F", str(ssh_config_path(sim.spec)), "-O", "exit", node], capture_output=True, timeout=10)


def test_nodes_are_isolated_machines(sim):
    for i, node in enumerate(sim.nodes):
        assert sim.exec(node, ["hostname"]).check().stdout.strip() == node
        assert sim.exec(node, ["hostname", "-I"]).stdout.split() == [sim.spec.nodes[i].address]
        # own process table: PID 1 is the node agent, and the other nodes' agents are invisible
        listing = sim.exec(node, ["ps", "-ww", "-eo", "pid=,args="]).check().stdout
        ps = [line.split(None, 1) for line in listing.splitlines()]
        init = next(args for pid, args in ps if pid == "1")
        # safe-path mode (-P): root's agent never imports from the directory `sim up` ran in
        assert init.startswith(f"{sys.executable} -P -m dscluster.node.agent start") and f"--name {node}" in init
        assert sum("dscluster.node.agent" in args for _, args in ps) == 1
        # the only route is the cluster subnet: nothing leaves the machine
        routes = sim.exec(node, ["ip", "-4", "route"]).check().stdout.strip().splitlines()
        assert len(routes) == 1 and routes[0].startswith(sim.subnet) and "default" not in routes[0]
    out = sim.exec("node0", [sys.executable, "-c", "import socket; s=socket.socket(); s.settimeout(2); "
                                                   "s.connect(('1.1.1.1', 80))"])
    assert out.returncode != 0 and "unreachable" in out.stderr
    # fast failure on a vanished peer (TCP gives up in seconds, not 15 minutes), per node namespace
    assert sim.exec("node1", ["cat", "/proc/sys/net/ipv4/tcp_retries2"]).stdout.strip() == "5"


def test_node_agent_reaps_orphans_as_pid_1(sim):
    """A process orphaned on a node (its ssh session ended) is re-parented to the agent, which reaps it."""
    assert ssh(sim, "node1", "sh", "-c", "'sleep 0.3 &'").returncode == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        stats = sim.exec("node1", ["ps", "-eo", "stat=,args="]).stdout.splitlines()
        if not any("sleep 0.3" in line for line in stats):
            break
        time.sleep(0.2)
    stats = sim.exec("node1", ["ps", "-eo", "stat=,args="]).stdout.splitlines()
    assert not any(line.startswith("Z") for line in stats), stats


def test_ssh_mesh_with_pinned_keys(sim):
    """Every node reaches every node (itself included) as the node user, with the cluster config."""
    cfg = str(ssh_config_path(sim.spec))
    for src in sim.nodes:
        script = "; ".join(f"ssh -F {cfg} {dst} -- 'hostname; id -un'" for dst in sim.nodes)
        out = sim.exec(src, ["sh", "-c", script], timeout=60).check().stdout.split()
        assert out == [w for dst in sim.nodes for w in (dst, sim.spec.ssh_user)]
    known = (sim.spec.state_dir / "known_hosts").read_text().splitlines()
    assert [line.split()[0] for line in known] == sim.nodes
    assert all(line.split()[1] == "ssh-ed25519" for line in known)


def test_runner_interface_over_ssh(sim):
    runner = SSHRunner(sim.spec, sim.spec.node("node1"))
    result = runner.run(["sh", "-c", 'echo "$0 $FOO"; pwd; cat', "a b"], env={"FOO": "x y"}, cwd="/tmp",
                        input="from stdin")
    assert result.ok and result.stdout == "a b x y\n/tmp\nfrom stdin", result
    assert runner.run(["false"]).returncode == 1
    src = sim.spec.shared_dir / "copy-src.txt"
    src.write_text("payload\n")
    assert runner.copy(str(src), "/tmp/dsc-copied.txt").ok
    assert sim.exec("node1", ["cat", "/tmp/dsc-copied.txt"]).stdout == "payload\n"
    sim.exec("node1", ["rm", "-f", "/tmp/dsc-copied.txt"])


def test_pdsh_goes_through_the_cluster_config(sim):
    """pdsh, run on the master as DeepSpeed runs it, reaches all nodes only via the generated wrapper."""
    argv, env = pdsh_argv(sim.spec, ["hostname"], path=os.environ["PATH"])
    out = sim.exec("node0", argv, env=env, timeout=60).check().stdout
    assert sorted(out.split()) == sorted(w for n in sim.nodes for w in (f"{n}:", n))
    # Without the wrapper, plain ssh (no cluster config: unknown host key, no cluster key) is refused.
    bare = sim.exec("node0", ["pdsh", "-S", "-R", "ssh", "-w", "node1", "true"],
                    env={"PATH": os.environ["PATH"], "PDSH_SSH_ARGS_APPEND": "-o BatchMode=yes"}, timeout=60)
    assert bare.returncode != 0


def test_sshd_refuses_password_login(sim, tmp_path):
    """The server offers public keys only: ssh never even gets to ask for a password."""
    askpass = tmp_path / "askpass"
    asked = tmp_path / "asked"
    askpass.write_text(f"#!/bin/sh\ntouch {asked}\necho not-the-password\n")
    askpass.chmod(0o755)
    close_mux(sim, "node1")
    env = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"}
    argv = ["ssh", "-F", str(ssh_config_path(sim.spec)), "-o", "ControlMaster=no", "-o", "ControlPath=none",
            "-o", "BatchMode=no", "-o", "PubkeyAuthentication=no",
            "-o", "PreferredAuthentications=password,keyboard-interactive",
            "-o", "PasswordAuthentication=yes", "-o", "KbdInteractiveAuthentication=yes", "node1", "true"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 255
    assert "Permission denied (publickey)" in proc.stderr, proc.stderr
    assert not asked.exists()


def test_sshd_refuses_root_login_even_with_the_cluster_key(sim):
    close_mux(sim, "node1")
    proc = ssh(sim, "node1", "true", extra=["-o", "ControlPath=none", "-l", "root"])
    assert proc.returncode == 255 and "Permission denied" in proc.stderr
    log = sim.log_path("node1").read_text()
    assert "User root from" in log and "not allowed because listed in DenyUsers" in log


def test_sshd_refuses_an_unknown_key(sim, tmp_path):
    key = tmp_path / "stranger"
    identity.generate_keypair(key, "stranger")
    # the cluster config with the stranger's key in place of the cluster key
    cfg = sim.spec.state_dir / "stranger_config"
    cfg.write_text(ssh_config_path(sim.spec).read_text().replace(str(sim.spec.state_dir / "id_ed25519"), str(key)))
    proc = subprocess.run(["ssh", "-F", str(cfg), "-o", "ControlPath=none", "node2", "true"], capture_output=True,
                          text=True, timeout=20)
    assert proc.returncode == 255 and "Permission denied (publickey)" in proc.stderr
    assert "Failed publickey for dscluster" in sim.log_path("node2").read_text()


@contextlib.contextmanager
def provider_owned(sim):
    """The shared dir its provider's (the node user's), as where root cannot own files on the storage (NFS with
    root_squash): what the node user writes there, host-key records included, is its say-so."""
    shared = Path(sim.spec.shared_dir)
    st, node_user = shared.stat(), pwd.getpwnam(sim.spec.ssh_user)
    os.chown(shared, node_user.pw_uid, node_user.pw_gid)
    try:
        yield
    finally:
        os.chown(shared, st.st_uid, st.st_gid)
        os.chmod(shared, st.st_mode & 0o7777)


def test_swapped_host_key_is_refused_until_trusted(sim):
    node = sim._node("node2")
    hostkey = os.path.join(node["state_dir"], "ssh_host_ed25519_key")
    sim.crash("node2")
    for suffix in ("", ".pub"):
        os.unlink(hostkey + suffix)
    identity.generate_keypair(Path(hostkey), "impostor")
    sim.heal("node2")  # the agent keeps the (new) key it finds and publishes it
    close_mux(sim, "node2")
    report = sync_known_hosts(sim.spec)
    assert report.changed == ["node2"]  # published key differs from the pin: not accepted silently
    proc = ssh(sim, "node2", "true")
    assert proc.returncode == 255
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in proc.stderr or "Host key verification failed" in proc.stderr
    result = SSHRunner(sim.spec, sim.spec.node("node2")).run(["true"])
    assert "host key" in ssh_failure(result)[0]
    # where the node user owns the shared dir (NFS with root_squash: sharedlayout cannot make it root's), the record
    # there is its say-so: re-pinning from it is refused ...
    from dscluster import cli

    with provider_owned(sim):
        assert cli.main(["config", "trust", "--cluster", str(sim.spec.path), "node2"]) == 1
    # ... re-pinning on purpose from the node itself restores access
    assert cli.main(["config", "trust", "--cluster", str(sim.spec.path), "--scan", "--yes", "node2"]) == 0
    assert ssh(sim, "node2", "hostname").stdout.strip() == "node2"


def test_partition_then_heal(sim):
    sim.partition("node1")
    try:
        close_mux(sim, "node1")
        started = time.monotonic()
        result = SSHRunner(sim.spec, sim.spec.node("node1")).run(["true"], timeout=5)
        assert not result.ok and time.monotonic() - started < 8  # the deadline holds; no hang
        assert ssh(sim, "node0", "true").returncode == 0  # the others are unaffected
        assert sim.is_running("node1")  # its processes keep running
        status = {r["node"]: r for r in sim.status()}
        assert not status["node1"]["link_up"] and status["node0"]["ssh_port_open"]
    finally:
        sim.heal("node1")
    assert ssh(sim, "node1", "hostname").stdout.strip() == "node1"


def test_crash_then_heal(sim):
    old_pid = sim._node("node1")["pid1"]
    pins = (sim.spec.state_dir / "known_hosts").read_text()
    sim.crash("node1")
    assert not sim.is_running("node1") and not os.path.exists(f"/proc/{old_pid}")
    with pytest.raises(ClusterError, match="node1 is down"):
        sim.exec("node1", ["true"])
    close_mux(sim, "node1")
    assert ssh(sim, "node1", "true").returncode == 255
    sim.heal("node1")
    assert sim._node("node1")["pid1"] != old_pid
    # same host key after a restart: the existing pin still works, nothing re-trusted
    assert ssh(sim, "node1", "hostname").stdout.strip() == "node1"
    assert (sim.spec.state_dir / "known_hosts").read_text() == pins


def test_agent_stops_cleanly_on_sigterm_and_restarts_idempotently(sim):
    node = sim._node("node2")
    pid1 = node["pid1"]
    os.kill(pid1, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while os.path.exists(f"/proc/{pid1}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid1}")
    assert "stopping (signal 15)" in sim.log_path("node2").read_text()
    sim.heal("node2")
    assert ssh(sim, "node2", "hostname").stdout.strip() == "node2"


def test_deepspeed_runner_and_mpirun_go_through_the_cluster_config(sim):
    """The real DeepSpeed runner (its ssh pre-check, its `ssh HOST hostname -I` master-address probe
    and pdsh) and OpenMPI's mpirun reach every node with nothing but pdsh_env / openmpi_env."""
    from dscluster.launcher.backends.openmpi import openmpi_args, openmpi_env

    work = sim.spec.shared_dir / "h2-launch"
    work.mkdir(exist_ok=True)
    (work / "hostfile").write_text(sim.spec.hostfile_text())
    (work / "t.py").write_text("import os, socket\nprint('RANK', os.environ['RANK'], socket.gethostname())\n")
    deepspeed = str(Path(sys.executable).parent / "deepspeed")
    proc = subprocess.run([deepspeed, "--hostfile", "hostfile", "t.py"], cwd=work, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **pdsh_env(sim.spec)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    ranks = sorted(line.split(": ", 1)[1] for line in proc.stdout.splitlines() if ": RANK " in line)
    assert ranks == [f"RANK {i} node{i}" for i in range(3)], proc.stdout[-2000:]
    assert f"--master_addr={sim.spec.master.address}" in proc.stdout + proc.stderr  # inferred over ssh
    proc = subprocess.run(["mpirun", "--allow-run-as-root", *openmpi_args(sim.spec), "-n", "3", "-hostfile",
                           "hostfile", "hostname"], cwd=work, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **openmpi_env(sim.spec)})
    assert proc.returncode == 0 and sorted(proc.stdout.split()) == sim.nodes, proc.stderr[-2000:]


def test_trust_by_scan_when_the_shared_dir_is_not_readable_here(sim):
    """TOFU fallback: the scanned key is shown as the fingerprint the node agent logged, pinned only
    with consent, and a scanned key that contradicts the published one is never pinned. The records lie where the
    node user can write (its shared dir, as on NFS with root_squash, where sharedlayout cannot make it root's)."""
    with provider_owned(sim):
        from dscluster import cli
        from dscluster.cluster.ssh import fingerprint, read_known_hosts, write_known_hosts

        pins = read_known_hosts(sim.spec)
        record = sim.spec.shared_dir / ".dscluster" / "hostkeys" / "node1.json"
        original = record.read_text()
        record.unlink()  # as on a controller that does not mount the shared directory
        write_known_hosts(sim.spec, {k: v for k, v in pins.items() if k != "node1"})
        fp = fingerprint(pins["node1"])
        assert fp in sim.log_path("node1").read_text()  # what the user compares against
        argv = ["config", "trust", "--cluster", str(sim.spec.path), "--scan", "node1"]
        try:
            refused = run_cli(*argv, timeout=60, stdin=subprocess.DEVNULL)
            assert refused.returncode == 2 and "--yes" in refused.stderr and fp in refused.stdout
            assert "node1" not in read_known_hosts(sim.spec)
            done = run_cli(*argv, "--yes", timeout=60)
            assert done.returncode == 0, done.stderr
            assert read_known_hosts(sim.spec)["node1"] == pins["node1"]
        finally:
            record.write_text(original)
        # a record the node user could have written proves nothing either way: a forged one changes no pin
        record.write_text(original.replace(pins["node1"].split()[1], pins["node0"].split()[1]))
        try:
            forged = run_cli(*argv, "--yes", timeout=60)
            assert forged.returncode == 0 and read_known_hosts(sim.spec)["node1"] == pins["node1"], forged.stdout
            assert cli.main(["config", "trust", "--cluster", str(sim.spec.path), "node1"]) == 1  # refused, not pinned
            assert read_known_hosts(sim.spec)["node1"] == pins["node1"]
        finally:
            record.write_text(original)

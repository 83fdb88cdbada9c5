"""`SimCluster`: N real "nodes" on this machine, each running the real node agent (sshd).

A node = its own network namespace (IP on a private bridge, no route out), UTS namespace (its own
hostname, so `hostname` and DeepSpeed's `hostname -I` answer per node) and PID namespace (so the
`pkill -f` DeepSpeed runs on every node only sees that node, and `crash` kills the whole node).
The node agent is PID 1 of its node:
    ip netns exec NS unshare --pid --fork --mount-proc --uts --kill-child -- \
        sh -c '...; exec python -m dscluster.node.agent start ...'
The filesystem is shared, which is exactly the shared-storage (NFS) assumption.

Where things live:
- <home>/sims/<name>/dscluster.toml   the generated spec (resolve_spec finds the "default" one)
- <home>/sims/<name>/cluster/         identity, ssh_config, known_hosts (the spec's state_dir)
- <home>/sims/<name>/shared/          the shared directory (kept by `down`, removed by `down --purge`)
- <home>/sims/<name>/logs/<node>.log  each node agent's output (sshd logs, VERBOSE)
- /run/dscluster/sims/<name>/         runtime: state.json (pids, subnet) and each node's sshd files
Names, interfaces and the runtime dir depend only on <name>, so `up` and `down` find and remove
what a killed process left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dscluster import fsutil, paths, sharedlayout
from dscluster.cluster import identity
from dscluster.cluster.runner import CommandResult, run_parallel, run_subprocess
from dscluster.cluster.spec import ClusterSpec, NodeSpec, format_spec, load_spec
from dscluster.cluster.ssh import SSHRunner, ensure_ssh_files, known_hosts_path, pin_host_keys, ssh_failure
from dscluster.errors import ClusterError, UsageError
from dscluster.fsutil import atomic_write_json, atomic_write_text
from dscluster.i18n import tr
from dscluster.node.sshd import HOST_KEY_NAME
from dscluster.safepython import module_argv
from dscluster.sim import network
from dscluster.sim.names import MAX_NODES, SimNames, check_name, check_tag_unique, choose_subnet, node_ip
from dscluster.sim.nodeuser import SIM_USER, ensure_shared
from dscluster.sim.procs import child_of, freeze, global_lock, reap, recorded, remember, require_root
from dscluster.sim.teardown import down, teardown

SSH_PORT = 2222
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Fast failure on a partitioned peer (multinode_sim.md §7): TCP gives up after ~6 s of retransmits
# instead of ~15 min, and idle connections are probed every 5 s.
_NODE_BOOT = """hostname "$1"; shift
echo 5 > /proc/sys/net/ipv4/tcp_retries2
echo 10 > /proc/sys/net/ipv4/tcp_keepalive_time
echo 5 > /proc/sys/net/ipv4/tcp_keepalive_intvl
echo 3 > /proc/sys/net/ipv4/tcp_keepalive_probes
exec "$@"
"""


def _port_open(ip: str, port: int, timeout: float = 0.3) -> bool:
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return True
    except OSError:
        return False


def _log_tail(path: Path, lines: int = 10) -> str:
    try:
        return "\n".join("    " + ln for ln in path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "    (no log)"


def _check_size(n: int, slots: int) -> None:
    if not 1 <= n <= MAX_NODES:
        raise UsageError(tr("{n} nodes is out of range", n=n), tr("use 1 to {max}", max=MAX_NODES))
    if not 1 <= slots <= 64:
        raise UsageError(tr("--slots {slots} is out of range", slots=slots), tr("use 1 to 64"))


def _publish(spec: ClusterSpec, names: SimNames, n: int, shared: Path) -> None:
    """The spec written, the cluster key made and published, the old nodes' host-key records gone."""
    atomic_write_text(spec.path, format_spec(spec))
    known_hosts_path(spec).unlink(missing_ok=True)  # new nodes, new host keys
    identity.ensure_identity(spec)
    identity.publish_cluster_pubkey(spec)
    identity.publish_spec(spec)
    for i in range(n):
        with contextlib.suppress(OSError):  # by descriptor: the shared dir is the node user's
            fsutil.unlink(identity.hostkeys_dir(shared) / f"{names.node(i)}.json")


class SimCluster:
    """A running simulated cluster. Create with `SimCluster.up(...)`, find with `SimCluster.attach(name)`."""

    def __init__(self, state: dict):
        self.state = state
        self.name: str = state["name"]
        self.names = SimNames(self.name)
        self.home = Path(state["home"])
        self._spec: ClusterSpec | None = None

    # --- where things are ------------------------------------------------------------------------
    @staticmethod
    def base_dir(name: str, home: Path | None = None) -> Path:
        return Path(home or paths.home()) / "sims" / name

    @property
    def spec_path(self) -> Path:
        return Path(self.state["spec_path"])

    @property
    def spec(self) -> ClusterSpec:
        if self._spec is None:
            self._spec = load_spec(self.spec_path)
        return self._spec

    @property
    def nodes(self) -> list[str]:
        return [n["name"] for n in self.state["nodes"]]

    @property
    def subnet(self) -> str:
        return self.state["subnet"]

    def _node(self, node: str | int) -> dict:
        for entry in self.state["nodes"]:
            if node in (entry["name"], entry["index"], entry["ip"]):
                return entry
        raise UsageError(tr("no node {node!r} in simulated cluster {name!r}", node=node, name=self.name),
                         tr("choose one of: {nodes}", nodes=", ".join(self.nodes)))

    def _save(self) -> None:
        atomic_write_json(self.names.runtime_dir / "state.json", self.state)

    def log_path(self, node: str | int) -> Path:
        return Path(self.state["logs_dir"]) / f"{self._node(node)['name']}.log"

    # --- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def attach(cls, name: str = "default") -> SimCluster:
        check_name(name)
        path = SimNames(name).runtime_dir / "state.json"
        try:
            return cls(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            raise ClusterError(tr("no simulated cluster named {name!r} is up", name=name),
                               tr("start it: dscluster sim up 3 --name {name}", name=name)) from None

    @classmethod
    def up(cls, name: str = "default", n: int = 3, subnet: str | None = None, *, home: str | os.PathLike | None = None,
           shared_dir: str | os.PathLike | None = None, user: str = SIM_USER, slots: int = 1,
           timeout: float = 30.0, check_mesh: bool = True, lab: bool = False,
           master_identity: bool | None = None, slurm: bool = False, hub: bool = False) -> SimCluster:
        """Create (or re-create) the cluster; returns once every node's sshd accepts the cluster key.
        With `lab`, the master's agent also starts JupyterLab (as the node user, on its 127.0.0.1).
        With `master_identity` (default: as `lab`), the master's agent installs the cluster key for the
        node user (~/.dscluster/clusters/<name>/), so it can launch across the cluster. The sim's
        nodes share one home directory, so every node's user can then read that key.
        With `slurm`, a real Slurm runs on the nodes too (sim/slurm.py); with `hub`, JupyterHub on the master."""
        require_root()
        check_name(name)
        _check_size(n, slots)
        names = SimNames(name)
        with global_lock():
            check_tag_unique(name)
            teardown(names, purge=False)  # whatever a killed `up` or an old cluster left
            net = choose_subnet(name, n, subnet)
            base = cls.base_dir(name, Path(home) if home else None)
            shared = Path(shared_dir) if shared_dir else base / "shared"
            entry, granted = ensure_shared(user, shared)
            sharedlayout.make_right(shared)  # runs/, data/, users/... as the model says, whatever ran before
            logs = base / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            names.runtime_dir.mkdir(parents=True, exist_ok=True)
            os.chmod(names.runtime_dir, 0o755)
            # Every node's cluster-facing interface is eth0 (so NCCL/GLOO_SOCKET_IFNAME are known).
            spec = ClusterSpec(name=name, shared_dir=shared.resolve(), ssh_user=user, ssh_port=SSH_PORT,
                               network_interface="eth0",
                               nodes=tuple(NodeSpec(address=node_ip(net, i), slots=slots, name=names.node(i),
                                                    ssh_port=SSH_PORT) for i in range(n)),
                               path=(base / "dscluster.toml").resolve(), state_dir=(base / "cluster").resolve())
            state = {"name": name, "n": n, "subnet": str(net), "home": str(Path(home or paths.home()).resolve()),
                     "spec_path": str(spec.path), "shared_dir": str(spec.shared_dir), "user": user,
                     "logs_dir": str(logs.resolve()), "created": time.time(), "lab": lab, "hub": hub,
                     "master_identity": lab if master_identity is None else master_identity,
                     "user_identity_dir": str(Path(entry.pw_dir) / ".dscluster" / "clusters" / name),
                     "granted_traverse": [str(g) for g in granted],
                     "nodes": [{"name": names.node(i), "index": i, "netns": names.netns(i), "ip": node_ip(net, i),
                                "pid1": None, "launcher_pid": None, "state_dir": str(names.node_state_dir(i))}
                               for i in range(n)]}
            sim = cls(state)
            sim._save()  # first, so a killed `up` can be found and cleaned
            _publish(spec, names, n, shared)
            network.create(names, net, n)
            started = time.time()
            for i in range(n):
                sim._start_node(i)
            sim._wait_ready(range(n), started, timeout)
            sim._save()
        sim._trust_host_keys(logs)
        if check_mesh:
            sim.check_ssh()
        if slurm:
            from dscluster.sim import slurm as sim_slurm

            with global_lock():
                sim_slurm.start(sim)
        return sim

    def _trust_host_keys(self, logs: Path) -> None:
        """The nodes' host keys pinned, and the records of them in the shared directory agreeing."""
        self.pin_host_keys()
        sync = ensure_ssh_files(self.spec)
        if sync.changed:
            raise ClusterError(tr("the host-key records of {nodes} in {dir} disagree with the keys the nodes hold",
                                  nodes=", ".join(sync.changed), dir=identity.hostkeys_dir(self.spec.shared_dir)),
                               tr("someone who can write the shared directory changed them: remove them "
                                  "(rm {dir}/*.json) and run sim up again; the nodes' own keys are pinned",
                                  dir=identity.hostkeys_dir(self.spec.shared_dir)))
        if sync.missing or sync.untrusted:
            raise ClusterError(tr("host keys missing for {nodes}", nodes=", ".join(sync.missing + sync.untrusted)),
                               tr("see the node logs in {logs}", logs=logs))

    def _start_node(self, i: int) -> None:
        entry = self.state["nodes"][i]
        Path(entry["state_dir"]).mkdir(parents=True, exist_ok=True)
        role = "master" if i == 0 else "worker"
        agent = [*module_argv(sys.executable, "dscluster.node.agent"), "start", "--shared", self.state["shared_dir"],
                 "--user", self.state["user"], "--port", str(SSH_PORT), "--role", role, "--name", entry["name"],
                 "--state-dir", entry["state_dir"]]
        agent += [f"--{part}" for part in ("lab", "hub") if i == 0 and self.state.get(part)]  # the master's
        if i == 0 and self.state.get("master_identity"):
            agent += ["--identity", str(self.spec.state_dir / "id_ed25519")]
        argv = ["ip", "netns", "exec", entry["netns"], "unshare", "--pid", "--fork", "--mount-proc", "--uts",
                "--kill-child", "--", "/bin/sh", "-c", _NODE_BOOT, "dscluster-node", entry["name"]] + agent
        hub_home = {"DSCLUSTER_HOME": self.state["home"]} if i == 0 and self.state.get("hub") else {}
        env = {"PATH": f"{Path(sys.executable).parent}:{NODE_PATH}", "LANG": "C.UTF-8", "HOME": "/root",
               "PYTHONDONTWRITEBYTECODE": "1", **hub_home}
        log = open(Path(self.state["logs_dir"]) / f"{entry['name']}.log", "ab")
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, cwd="/")
        finally:
            log.close()
        remember(entry, "launcher_pid", proc.pid)
        remember(entry, "pid1", child_of(proc.pid, time.monotonic() + 5))
        self._procs = getattr(self, "_procs", {})
        self._procs[i] = proc

    def _wait_ready(self, indices: Sequence[int] | range, started: float, timeout: float) -> None:
        pending = set(indices)
        hostkeys = identity.hostkeys_dir(self.state["shared_dir"])
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for i in sorted(pending):
                entry = self.state["nodes"][i]
                proc = getattr(self, "_procs", {}).get(i)
                if proc is not None and proc.poll() is not None:
                    raise ClusterError(
                        tr("{node}'s node agent exited ({code}); its log:\n{tail}", node=entry["name"],
                           code=proc.returncode, tail=_log_tail(self.log_path(i))),
                        tr("fix the cause above, then: dscluster sim up {n} --name {name}", n=self.state["n"],
                           name=self.name), node=entry["name"])
                record = hostkeys / f"{entry['name']}.json"
                try:
                    fresh = record.stat().st_mtime >= started - 1
                except FileNotFoundError:
                    fresh = False
                if fresh and _port_open(entry["ip"], SSH_PORT):
                    pending.discard(i)
            if pending:
                time.sleep(0.03)
        if pending:
            first = min(pending)
            raise ClusterError(tr("{nodes} did not start within {s:.0f} s; log of {node}:\n{tail}",
                                  nodes=", ".join(self.state["nodes"][i]["name"] for i in sorted(pending)),
                                  s=timeout, node=self.state["nodes"][first]["name"],
                                  tail=_log_tail(self.log_path(first))),
                               tr("dscluster sim down --name {name}, then up again", name=self.name))

    def pin_host_keys(self) -> dict[str, str]:
        """Pin every node's host key as the node itself holds it: read from its agent's state directory
        (root's, on this machine: the channel the admin trusts), never from the records on the shared
        storage, which the node user can write."""
        keys = {}
        for entry in self.state["nodes"]:
            parts = fsutil.read_bytes(Path(entry["state_dir"]) / f"{HOST_KEY_NAME}.pub").decode().split()
            keys[entry["name"]] = f"{parts[0]} {parts[1]}"
        pin_host_keys(self.spec, keys)
        return keys

    def check_ssh(self, timeout: float = 20.0) -> list[CommandResult]:
        """`ssh NODE true` to every node in parallel with the cluster key and pinned host keys."""
        results = run_parallel(lambda r: r.run(["true"], timeout=timeout),
                               [SSHRunner(self.spec, n) for n in self.spec.nodes])
        bad = [r for r in results if not r.ok]
        if bad:
            cause = ssh_failure(bad[0]) or (bad[0].stderr.strip(), "")
            raise ClusterError(tr("ssh to {nodes} failed: {cause}", nodes=", ".join(r.node for r in bad),
                                  cause=cause[0]),
                               cause[1] or tr("see {log}", log=self.log_path(bad[0].node)), node=bad[0].node)
        return results

    def down(self, purge: bool = False) -> None:
        down(self.name, purge=purge)

    # --- faults ----------------------------------------------------------------------------------
    def is_running(self, node: str | int) -> bool:
        return bool(recorded(self._node(node), "pid1", strict=False))

    def crash(self, node: str | int) -> None:
        """SIGKILL the node's PID 1: every process on the node dies at once (a polite power loss)."""
        entry = self._node(node)
        if pid1 := recorded(entry, "pid1", strict=False):  # that very process: a PID reused since is another's
            os.kill(pid1, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while recorded(entry, "pid1", strict=False) and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.02)  # let `unshare` notice its child died, then collect it
            reap([recorded(entry, "launcher_pid", strict=False)])
        entry["pid1"] = entry["launcher_pid"] = None
        self._save()

    def freeze(self, node: str | int) -> None:
        """Stop every process on the node (SIGSTOP): it keeps its link and connections but answers nothing."""
        if pid1 := recorded(self._node(node), "pid1", strict=False):
            freeze(pid1)

    def partition(self, node: str | int) -> None:
        """Cut the node's link: its packets stop, its processes keep running (a real network failure)."""
        network.set_link(self.names, self._node(node)["index"], up=False)

    def slow(self, node: str | int, rate: str | None = "50mbit", delay: str | None = None) -> None:
        """Slow the node's link both ways (tc tbf at `rate`, or netem with `delay`): a degraded NIC,
        cable or switch port. `heal` undoes it."""
        network.shape(self.names, self._node(node)["index"], rate, delay)

    def heal(self, node: str | int, timeout: float = 30.0) -> None:
        """Undo partition, freeze, slow and crash: link up at full speed, processes continued, node agent
        restarted (same host key) if it was down."""
        entry = self._node(node)
        if pid1 := recorded(entry, "pid1", strict=False):
            freeze(pid1, stop=False)
        network.unshape(self.names, entry["index"])
        network.set_link(self.names, entry["index"], up=True)
        if not recorded(entry, "pid1", strict=False):
            with global_lock():
                started = time.time()
                self._start_node(entry["index"])
                self._wait_ready([entry["index"]], started, timeout)
                self._save()
                if self.state.get("slurm"):
                    from dscluster.sim import slurm as sim_slurm

                    sim_slurm.restart_node(self, entry["name"])

    # --- running things on a node ----------------------------------------------------------------
    def exec_argv(self, node: str | int, argv: Sequence[str], *, cwd: str | None = None,
                  user: str | None = None) -> list[str]:
        """nsenter argv running `argv` inside the node (network, UTS, PID and mount namespaces), as root
        or as `user` (with its own HOME, without the caller's DSCLUSTER_HOME). The process inherits the
        caller's environment otherwise (sshd sessions do not)."""
        entry = self._node(node)
        if not recorded(entry, "pid1", strict=False):
            raise ClusterError(tr("{node} is down", node=entry["name"]),
                               tr("bring it back: dscluster sim heal {node} --name {name}", node=entry["name"],
                                  name=self.name), node=entry["name"])
        prefix = ["nsenter", "-t", str(entry["pid1"]), "-n", "-u", "-p", "-m", f"--wd={cwd or os.getcwd()}", "--"]
        if user:
            # runuser sets HOME/USER for the user; the caller's DSCLUSTER_HOME (root's state) is not theirs.
            prefix += ["runuser", "-u", user, "--", "env", "-u", "DSCLUSTER_HOME"]
        return prefix + list(argv)

    def exec(self, node: str | int, argv: Sequence[str], *, env: dict[str, str] | None = None,
             input: str | None = None, timeout: float = 60.0, cwd: str | None = None,
             user: str | None = None) -> CommandResult:
        name = self._node(node)["name"]
        return run_subprocess(name, self.exec_argv(node, argv, cwd=cwd, user=user), env=env, input=input,
                              timeout=timeout, display_argv=list(argv))

    def status(self) -> list[dict]:
        def one(entry: dict) -> dict:
            running = bool(recorded(entry, "pid1", strict=False))
            link = network.link_is_up(self.names, entry["index"])
            return {"node": entry["name"], "ip": entry["ip"], "netns": entry["netns"], "pid": entry["pid1"],
                    "running": running, "link_up": link, "shaped": network.shaping(self.names, entry["index"]),
                    "ssh_port_open": running and link and _port_open(entry["ip"], SSH_PORT, 0.5)}
        return run_parallel(one, self.state["nodes"])

"""Simulated *bare hosts*: N machines as an operator finds them before `dscluster up`.

`SimCluster` plays ready nodes (the node agent runs directly in each namespace). `BareHosts` plays
the step before: each host is a network namespace with its own address on a private bridge and its
own hostname, where the only thing running is the operator's sshd (port 22, root, key-only, with the
operator's key). A container engine started from a login on that host lives in that host's network:
podman, started from the host's sshd session, runs `--network host` containers in the host's
namespace (the sshd is started with `nsenter --net=...`, not `ip netns exec`, which remounts /sys
and leaves runc without a cgroup mount). So `dscluster up --engine podman` over this ssh starts the
real node image on each host, with host networking and the shared directory at the same path, as on
real servers.

Each host has its own engine state (podman: its own configuration, set for logins by its sshd; docker:
its own daemon, which logins reach through DOCKER_HOST), so container names and each node's host-key
volume are per host, as on real servers.

What differs from real servers, on purpose and visibly:
- one machine's kernel and filesystem serve every host: the shared directory is really shared (same
  path, same content), and the hosts read images from this machine's podman store as an additional
  read-only image store (as sites with a shared image store do), so an image built here is on every
  host without `podman save | ssh HOST podman load`;
- this machine refuses to raise a container's rlimits ("error setting rlimit type 8: operation not
  permitted"), so `up` runs here with `--ulimit none` instead of the RDMA defaults (memlock=-1, a
  64 MB stack) that real hosts get;
- the hosts have no GPUs (`--gpus none`);
- with `engine="docker"` each host runs its own dockerd, started in the host's network namespace with
  its own data root (one machine-wide dockerd would put every host's `--network host` container in
  its own namespace, not the host's). Those daemons have no bridge and no iptables rules (host
  networking only, which is all `up` uses) and no shared image store: an image reaches a host as on
  real servers without a registry, `docker save IMAGE | ssh HOST docker load`;
- the operator's ssh settings are a file of their own (`ssh_config`, passed as `--host-ssh-config`),
  with the hosts' keys pinned in its known_hosts from the start.

Layout: <base>/ssh/{id_ed25519,ssh_config,known_hosts}, <base>/hosts/<host>/ (sshd config, host key,
log), <base>/shared/ (owned by the image's UID), and in /run/dscluster/hosts/<name>/ the runtime
state (hosts.json, so `down` finds what a killed `up` left) and authorized_keys.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster import paths
from dscluster.errors import ClusterError, UsageError
from dscluster.fsutil import atomic_write_json, atomic_write_text
from dscluster.i18n import tr
from dscluster.sim import network
from dscluster.sim.names import MAX_NODES, SIM_RUNTIME_ROOT, SimNames, check_name, choose_subnet, node_ip
from dscluster.sim.procs import alive, global_lock, recorded, remember, require_root, terminate

HOSTS_RUNTIME = SIM_RUNTIME_ROOT.parent / "hosts"
IMAGE_UID = 10001  # the node image's user (docker/Dockerfile NODE_UID): it must write the shared dir
SSHD = "/usr/sbin/sshd"
SHARED_IMAGE_STORE = "/var/lib/containers/storage"  # this machine's podman store: images only, read-only
ENGINES = ("podman", "docker")
DOCKERD = "dockerd"


@dataclass(frozen=True)
class HostEntry:
    name: str
    address: str
    netns: str
    pid: int | None


def docker_socket(run_dir: Path) -> Path:
    """The host's own dockerd socket (under the root-only runtime directory: unix socket paths are short)."""
    return run_dir / "docker.sock"


def _sshd_config(host_dir: Path, ip: str, authorized: Path, run_dir: Path) -> str:
    engine = host_dir / "containers"
    return "\n".join([
        "Port 22", f"ListenAddress {ip}", f"HostKey {host_dir / 'ssh_host_ed25519_key'}",
        f"PidFile {host_dir / 'sshd.pid'}", f"AuthorizedKeysFile {authorized}",
        "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes", "UsePAM no", "StrictModes yes", "LogLevel VERBOSE",
        # A login on this host uses this host's podman configuration (its /etc/containers, in effect).
        # sshd's compiled-in PATH lacks /usr/sbin (ip, ss on some systems).
        f"SetEnv PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
        f"CONTAINERS_CONF={engine / 'containers.conf'} CONTAINERS_STORAGE_CONF={engine / 'storage.conf'} "
        f"DOCKER_HOST=unix://{docker_socket(run_dir)}", ""])


def dockerd_argv(host_dir: Path, run_dir: Path) -> list[str]:
    """One host's own Docker daemon: its own data root, exec root, socket and pid file, and no bridge,
    NAT or iptables rules of its own (host networking is all `up` uses; the hosts share one kernel's
    netfilter). overlay2 and the cgroupfs driver: this machine runs no systemd. Pure."""
    return [DOCKERD, "--config-file", str(host_dir / "docker" / "daemon.json"), "--data-root",
            str(host_dir / "docker" / "data"), "--exec-root", str(run_dir / "de"), "--pidfile",
            str(run_dir / "dockerd.pid"), "--host", f"unix://{docker_socket(run_dir)}", "--bridge", "none",
            "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--storage-driver", "overlay2",
            "--exec-opt", "native.cgroupdriver=cgroupfs"]


def engine_env(host_dir: Path) -> dict[str, str]:
    """The environment that makes podman act as this host's (for cleaning up from the controller)."""
    engine = host_dir / "containers"
    return {"CONTAINERS_CONF": str(engine / "containers.conf"), "CONTAINERS_STORAGE_CONF": str(engine / "storage.conf")}


def _write_engine_config(host_dir: Path, run_dir: Path, hosts_file: Path) -> None:
    """Each host's own podman state (containers, volumes: a container name or a state volume is per
    host, as on real servers), reading images from this machine's store as an additional read-only
    image store, as sites with a shared image store do: an image built or loaded here is on every host."""
    engine = host_dir / "containers"
    engine.mkdir(parents=True, exist_ok=True)
    atomic_write_text(engine / "storage.conf", "\n".join([
        "[storage]", 'driver = "overlay"', f'graphroot = "{engine / "storage"}"', f'runroot = "{run_dir / "storage"}"',
        "", "[storage.options]", f'additionalimagestores = ["{SHARED_IMAGE_STORE}"]', ""]))
    # podman's default nofile/nproc limits exceed this machine's hard limits ("setrlimit: Operation not
    # permitted"): none. crun does not support this machine's hybrid cgroups: runc.
    atomic_write_text(engine / "containers.conf", "\n".join([
        # The hosts' names resolve in their containers, as a real site's DNS or /etc/hosts makes them.
        "[containers]", "default_ulimits = []", f'base_hosts_file = "{hosts_file}"', "", "[engine]", 'runtime = "runc"', f'tmp_dir = "{run_dir / "libpod"}"',
        f'volume_path = "{engine / "storage" / "volumes"}"', ""]))


def _keygen(path: Path, comment: str) -> None:
    if not path.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                       check=True, capture_output=True, timeout=60)


def _port_open(ip: str, port: int) -> bool:
    try:
        with socket.create_connection((ip, port), timeout=0.3):
            return True
    except OSError:
        return False


def _start_dockerd(host_dir: Path, run_dir: Path, netns: str) -> int:
    """Start the host's dockerd in its network namespace (nsenter, like its sshd); its PID."""
    (host_dir / "docker").mkdir(parents=True, exist_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(host_dir / "docker" / "daemon.json", "{}\n")  # not this machine's /etc/docker/daemon.json
    log = open(host_dir / "dockerd.log", "ab")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns}", "--", *dockerd_argv(host_dir, run_dir)],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            cwd="/")
    log.close()
    return proc.pid


def _check_up(n: int, engine: str) -> None:
    if engine not in ENGINES:
        raise UsageError(tr("unknown container engine {engine!r}", engine=engine),
                         tr("use --engine podman or --engine docker"), setting="engine")
    if engine == "docker" and shutil.which(DOCKERD) is None:
        raise UsageError(tr("dockerd is not installed here"), tr("apt-get install docker.io (scripts/setup.sh test)"),
                         setting="engine")
    if not 1 <= n <= MAX_NODES:
        raise UsageError(tr("{n} nodes is out of range", n=n), tr("use 1 to {max}", max=MAX_NODES))


def _operator_files(name: str, root: Path, shared: Path, shared_uid: int, authorized: Path) -> None:
    """The hosts' directories, the shared dir (the image's user owns it), the operator's key and the
    hosts' authorized_keys."""
    ssh_dir = root / "ssh"
    for d in (root, ssh_dir, root / "hosts"):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o755)  # sshd's StrictModes: root-owned, not group/world-writable
    shared.mkdir(parents=True, exist_ok=True)
    os.chown(shared, shared_uid, shared_uid)
    os.chmod(shared, 0o755)
    _keygen(ssh_dir / "id_ed25519", f"operator@{name}")
    authorized.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(authorized, (ssh_dir / "id_ed25519.pub").read_text())


def _start_host(entry: dict, root: Path, run_dir: Path, authorized: Path, engine: str, save) -> str:
    """One host: its host key, engine config (and dockerd), and sshd in its network namespace (`entry`
    records the pids; `save` writes the state). Returns its known_hosts line."""
    host_dir = root / "hosts" / entry["name"]
    host_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(host_dir, 0o755)
    _keygen(host_dir / "ssh_host_ed25519_key", entry["name"])
    _write_engine_config(host_dir, run_dir, root / "hosts" / "hosts")
    if engine == "docker":
        remember(entry, "dockerd_pid", _start_dockerd(host_dir, run_dir, entry["netns"]))
        save()
    config = host_dir / "sshd_config"
    atomic_write_text(config, _sshd_config(host_dir, entry["address"], authorized, run_dir))
    known = (f"{entry['address']} " + (host_dir / "ssh_host_ed25519_key.pub").read_text().split(" ")[0]
             + " " + (host_dir / "ssh_host_ed25519_key.pub").read_text().split(" ")[1])
    log = open(host_dir / "sshd.log", "ab")  # noqa: SIM115 - the child keeps it
    argv = ["nsenter", f"--net=/run/netns/{entry['netns']}", "--", "unshare", "--uts", "--", "sh", "-c",
            'hostname "$1"; shift; exec "$@"', "sh", entry["name"], SSHD, "-D", "-e", "-f", str(config)]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd="/")
    log.close()
    remember(entry, "pid", proc.pid)
    return known


def _write_ssh_files(ssh_dir: Path, hosts: list[dict], known: list[str]) -> None:
    """The operator's known_hosts (every host's key pinned) and ssh_config."""
    atomic_write_text(ssh_dir / "known_hosts", "\n".join(known) + "\n")
    atomic_write_text(ssh_dir / "ssh_config", "".join(
        f"Host {h['address']} {h['name']}\n  HostName {h['address']}\n  User root\n"
        f"  IdentityFile {ssh_dir / 'id_ed25519'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {ssh_dir / 'known_hosts'}\n  StrictHostKeyChecking yes\n\n"
        for h in hosts))


class BareHosts:
    """A running set of simulated bare hosts. `BareHosts.up(...)`, `BareHosts.attach(name)`, `.down()`."""

    def __init__(self, state: dict):
        self.state = state
        self.name: str = state["name"]
        self.names = SimNames(self.name)
        self.base = Path(state["base"])

    # --- where things are ------------------------------------------------------------------------
    @staticmethod
    def runtime_file(name: str) -> Path:
        return HOSTS_RUNTIME / name / "hosts.json"

    @property
    def ssh_config(self) -> Path:
        return self.base / "ssh" / "ssh_config"

    @property
    def shared_dir(self) -> Path:
        return Path(self.state["shared_dir"])

    @property
    def hosts(self) -> list[HostEntry]:
        return [HostEntry(h["name"], h["address"], h["netns"], h.get("pid")) for h in self.state["hosts"]]

    @property
    def addresses(self) -> list[str]:
        return [h.address for h in self.hosts]

    def ssh_argv(self, host: str, *argv: str) -> list[str]:
        """The operator's own `ssh HOST -- ...` for one host (by name or address)."""
        address = next((h.address for h in self.hosts if host in (h.name, h.address)), host)
        # ssh joins remote words with spaces for the remote shell: quote each one.
        return ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", address, "--", shlex.join(argv)]

    # --- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def attach(cls, name: str) -> BareHosts:
        check_name(name)
        try:
            return cls(json.loads(cls.runtime_file(name).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            raise ClusterError(tr("no simulated bare hosts named {name!r} are up", name=name),
                               tr("start them: dscluster sim hosts up 3 --name {name}", name=name)) from None

    @classmethod
    def up(cls, name: str, n: int = 3, *, base: str | os.PathLike | None = None, subnet: str | None = None,
           shared_uid: int = IMAGE_UID, timeout: float = 20.0, engine: str = "podman") -> BareHosts:
        """Create the hosts (re-creating any of the same name) and return once every sshd (and, with
        engine="docker", every host's dockerd) answers."""
        require_root()
        check_name(name)
        _check_up(n, engine)
        names = SimNames(name)
        with global_lock():
            _teardown(name)
            net = choose_subnet(name, n, subnet)
            root = Path(base) if base else Path(paths.home()) / "sims" / f"{name}-hosts"
            ssh_dir, shared = root / "ssh", root / "shared"
            # sshd's StrictModes checks every directory above authorized_keys (/var/tmp, a pytest tmp
            # dir would fail): it lives in the root-only runtime directory instead.
            authorized = cls.runtime_file(name).parent / "authorized_keys"
            _operator_files(name, root, shared, shared_uid, authorized)
            state = {"name": name, "n": n, "engine": engine, "subnet": str(net), "base": str(root.resolve()),
                     "shared_dir": str(shared.resolve()), "created": time.time(),
                     "hosts": [{"name": f"host{i}", "address": node_ip(net, i), "netns": names.netns(i),
                                "pid": None, "dockerd_pid": None} for i in range(n)]}
            runtime = cls.runtime_file(name)
            atomic_write_json(runtime, state)  # first, so a killed `up` is found by `down`
            network.create(names, net, n)
            atomic_write_text(root / "hosts" / "hosts", "127.0.0.1\tlocalhost\n" + "".join(
                f"{h['address']}\t{h['name']}\n" for h in state["hosts"]))
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
            known = []
            for entry in state["hosts"]:
                run_dir = cls.runtime_file(name).parent / entry["name"]
                known.append(_start_host(entry, root, run_dir, authorized, engine,
                                         lambda: atomic_write_json(runtime, state)))
            _write_ssh_files(ssh_dir, state["hosts"], known)
            atomic_write_json(runtime, state)
        hosts = cls(state)
        hosts._wait(timeout)
        if engine == "docker":
            hosts._wait_dockerd(max(timeout, 60.0))
        return hosts

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        pending = list(self.hosts)
        while pending and time.monotonic() < deadline:
            pending = [h for h in pending if not _port_open(h.address, 22)]
            if pending:
                time.sleep(0.1)
        if pending:
            logs = {h.name: (self.base / "hosts" / h.name / "sshd.log").read_text(errors="replace")[-400:]
                    for h in pending}
            self.down()
            raise ClusterError(tr("the sshd of simulated hosts {hosts} did not start: {logs}",
                                  hosts=", ".join(logs), logs=logs),
                               tr("is openssh-server installed? (scripts/setup.sh test)"))

    @property
    def engine(self) -> str:
        return self.state.get("engine", "podman")

    def _wait_dockerd(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        pending = list(self.hosts)
        while pending and time.monotonic() < deadline:
            pending = [h for h in pending if subprocess.run(
                ["docker", "--host", f"unix://{docker_socket(self.run_dir(h.name))}", "version", "--format",
                 "{{.Server.Version}}"], capture_output=True, timeout=30).returncode != 0]
            if pending:
                time.sleep(0.3)
        if pending:
            logs = {h.name: (self.base / "hosts" / h.name / "dockerd.log").read_text(errors="replace")[-600:]
                    for h in pending}
            self.down()
            raise ClusterError(tr("the dockerd of simulated hosts {hosts} did not start: {logs}",
                                  hosts=", ".join(logs), logs=logs),
                               tr("is docker.io installed? (scripts/setup.sh test)"))

    def run_dir(self, host: str) -> Path:
        return self.runtime_file(self.name).parent / host

    def down(self) -> None:
        with global_lock():
            _teardown(self.name, self.state)


def _stop_dockerd(host_dir: Path, run_dir: Path, pid: int | None) -> None:
    """Remove the host daemon's containers and volumes, stop it (SIGTERM: it stops its containerd), and
    delete its data root (overlay mounts first)."""
    if alive(pid):
        docker = ["docker", "--host", f"unix://{docker_socket(run_dir)}"]
        ids = subprocess.run([*docker, "ps", "--all", "--quiet"], capture_output=True, text=True, timeout=60).stdout.split()
        if ids:
            subprocess.run([*docker, "rm", "--force", *ids], capture_output=True, timeout=120)
        subprocess.run([*docker, "volume", "prune", "--force"], capture_output=True, timeout=60)
    terminate([pid], grace=20.0)
    data = host_dir / "docker" / "data"
    subprocess.run(["sh", "-c", 'grep -o " $1[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount --lazy', "umount-under",
                    str(data)], capture_output=True, timeout=60)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(run_dir / "de", ignore_errors=True)


def _teardown(name: str, state: dict | None = None) -> None:
    """Stop each host's sshd (by its recorded PID) and anything still running in the hosts' namespaces
    (a container `dscluster down` did not remove), then remove namespaces, bridge and state."""
    names = SimNames(name)
    runtime = BareHosts.runtime_file(name)
    if state is None:
        try:
            state = json.loads(runtime.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = None
    base = Path(state["base"]) if state else None
    for entry in (state or {}).get("hosts", []):
        host_dir = base / "hosts" / entry["name"]
        if entry.get("dockerd_pid"):  # what `dscluster down` did not remove, then the daemon itself
            _stop_dockerd(host_dir, runtime.parent / entry["name"], recorded(entry, "dockerd_pid"))
        if (host_dir / "containers").is_dir() and state.get("engine", "podman") == "podman":
            env = {**os.environ, **engine_env(host_dir)}
            for argv in (["podman", "rm", "--all", "--force", "--time", "5"], ["podman", "volume", "prune", "--force"]):
                subprocess.run(argv, env=env, capture_output=True, timeout=120)
    pids = {p for h in (state or {}).get("hosts", []) if (p := recorded(h, "pid"))}  # identity, not liveness
    for ns in network.existing_netns(names):
        pids.update(network.netns_pids(ns))
    terminate(pids, grace=5.0)
    network.destroy(names)
    if base is not None:
        for entry in state.get("hosts", []):
            storage = base / "hosts" / entry["name"] / "containers" / "storage"
            subprocess.run(["umount", "--recursive", "--lazy", str(storage / "overlay")], capture_output=True, timeout=30)
            shutil.rmtree(storage, ignore_errors=True)
    shutil.rmtree(runtime.parent, ignore_errors=True)
    runtime.unlink(missing_ok=True)
    (runtime.parent / "authorized_keys").unlink(missing_ok=True)
    try:
        runtime.parent.rmdir()
    except OSError:
        pass

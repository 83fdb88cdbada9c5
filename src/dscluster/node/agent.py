"""The node agent (`dscluster node start`): the image's entrypoint, also usable on bare metal.

On start it (1) checks the node user (exists, not root, a login shell, not locked), (2) writes a
hardened sshd config with the node's own host key under --state-dir, (3) installs the cluster's
public key from <shared>/.dscluster/cluster.pub, (4) publishes this node's host public key to
<shared>/.dscluster/hostkeys/<name>.json, (5) runs sshd in the foreground and, on the master with
--lab, JupyterLab as the node user (dscluster.node.lab). SIGTERM/SIGINT stop everything cleanly.
Restarting is idempotent: the host key is kept, everything else is rewritten.

It also acts as PID 1 when a container (or the simulated cluster's PID namespace) makes it so: it
reaps every orphan, so finished ranks never pile up as zombies.

Runs as root (sshd must switch to the node user on login). Run directly with
`python -m dscluster.node.agent start ...` (the simulated cluster does, to skip the CLI's imports).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster.cluster.identity import cluster_pubkey_path, ensure_shared_meta, hostkeys_dir
from dscluster.cluster.spec import DEFAULT_SSH_PORT, DEFAULT_USER
from dscluster.errors import ConfigError, DsclusterError, PermissionNeeded
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr
from dscluster.node import sshd as sshd_mod
from dscluster.node.supervise import Supervisor

DEFAULT_STATE_DIR = Path("/var/lib/dscluster/node")
STATS_INTERVAL_S = 2.0  # how often each node publishes its GPU/CPU sample for the panel


@dataclass(frozen=True)
class AgentOptions:
    shared_dir: Path
    user: str = DEFAULT_USER
    port: int = DEFAULT_SSH_PORT
    role: str = "worker"
    name: str = ""
    state_dir: Path = DEFAULT_STATE_DIR
    listen: str | None = None
    lab: bool = False
    hub: bool = False  # on the master: JupyterHub (as root: it starts each person's JupyterLab as them)
    identity: Path | None = None  # the cluster's private key, for the node user on the master
    people: bool = False  # in a node container: the people's accounts from root's records (node/people.py)
    metrics_port: int = 9410  # Prometheus /metrics of this node's GPUs/CPU (dscluster.prom.NODE_PORT); 0: off
    metrics_address: str = "0.0.0.0"  # every interface, like Prometheus's node_exporter; or the cluster one

    @property
    def node_name(self) -> str:
        return self.name or socket.gethostname()


@dataclass(frozen=True)
class PreparedNode:
    config: Path
    host_key: Path
    authorized_keys: Path
    host_record: Path
    sshd: str


def check_user(user: str) -> pwd.struct_passwd:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise ConfigError(tr("the node user {user!r} does not exist on this node", user=user),
                          tr("create it (same UID on every node): useradd --create-home --shell /bin/bash {user} "
                             "&& usermod -p '*' {user}", user=user), setting="ssh_user") from None
    if entry.pw_uid == 0:
        raise ConfigError(tr("the node user {user!r} is root", user=user),
                          tr("use a non-root user; sshd refuses root logins"), setting="ssh_user")
    if not entry.pw_shell or entry.pw_shell.endswith(("nologin", "false")) or not os.access(entry.pw_shell, os.X_OK):
        raise ConfigError(tr("the node user {user!r} has no login shell ({shell})", user=user, shell=entry.pw_shell),
                          tr("usermod --shell /bin/bash {user}", user=user), setting="ssh_user")
    if _password_locked(user):
        # With UsePAM no, OpenSSH refuses every login of a locked account, keys included.
        raise ConfigError(tr("the node user {user!r} is locked ('!' password), so sshd refuses even key logins",
                             user=user),
                          tr("unlock it without giving it a password: usermod -p '*' {user}", user=user),
                          setting="ssh_user")
    return entry


def _password_locked(user: str) -> bool:
    try:
        with open("/etc/shadow", encoding="utf-8") as f:
            for line in f:
                fields = line.split(":")
                if fields[0] == user and len(fields) > 1:
                    return fields[1].startswith("!")
    except OSError:
        pass
    return False


def local_addresses() -> list[str]:
    """This node's non-loopback IPv4 addresses (how the controller matches a published key to a node)."""
    try:
        out = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True, timeout=5).stdout
        addrs = [a["local"] for link in json.loads(out or "[]") for a in link.get("addr_info", [])
                 if a.get("local") and not a["local"].startswith("127.")]
        if addrs:
            return addrs
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    try:
        return [a for a in socket.gethostbyname_ex(socket.gethostname())[2] if not a.startswith("127.")]
    except OSError:
        return []


def prepare(opts: AgentOptions) -> PreparedNode:
    """Write everything sshd needs and publish the host key. Idempotent."""
    if os.geteuid() != 0:
        raise PermissionNeeded(tr("the node agent must run as root (sshd switches to {user} on login)", user=opts.user),
                               tr("run it as the container's entrypoint (root), or: sudo dscluster node start ..."))
    entry = check_user(opts.user)
    shared = Path(opts.shared_dir)
    if not shared.is_dir():
        raise ConfigError(tr("the shared directory {path} does not exist on this node", path=shared),
                          tr("mount the cluster's shared storage at {path} (the same path on every node)", path=shared),
                          setting="shared_dir")
    pub_path = cluster_pubkey_path(shared)
    try:
        cluster_pub = pub_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ConfigError(tr("no cluster public key at {path}", path=pub_path),
                          tr("run `dscluster init ... --shared {shared}` on the controller first; it writes it",
                             shared=shared), setting="shared_dir") from None
    sshd = sshd_mod.find_sshd()
    state = Path(opts.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    os.chown(state, 0, 0)
    os.chmod(state, 0o755)
    sshd_mod.check_strict_modes_path(state, entry.pw_uid)
    host_key = sshd_mod.ensure_host_key(state, opts.node_name)
    authorized = state / "authorized_keys"
    atomic_write_text(authorized, sshd_mod.authorized_keys_text(cluster_pub), mode=0o644)
    config = state / "sshd_config"
    atomic_write_text(config, sshd_mod.render_sshd_config(port=opts.port, user=opts.user, host_key=host_key,
                                                          authorized_keys=authorized, listen=opts.listen), mode=0o644)
    sshd_mod.ensure_privsep_dir()
    record = publish_host_key(opts, host_key)
    return PreparedNode(config=config, host_key=host_key, authorized_keys=authorized, host_record=record, sshd=sshd)


def publish_host_key(opts: AgentOptions, host_key: Path) -> Path:
    record = {"name": opts.node_name, "hostname": socket.gethostname(), "addresses": local_addresses(),
              "ssh_port": opts.port, "role": opts.role, "key": sshd_mod.host_public_key(host_key),
              "published": time.time()}
    path = hostkeys_dir(opts.shared_dir) / f"{opts.node_name}.json"
    try:
        ensure_shared_meta(opts.shared_dir)
        atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n", mode=0o644)
    except OSError as err:
        # Typically NFS with root_squash: root on the node is "nobody" on the share.
        raise PermissionNeeded(tr("cannot publish this node's host key to {path}: {err}", path=path, err=err),
                               tr("let root on the nodes write {dir} (NFS: no_root_squash for it, or create it "
                                  "owned by the squashed user)", dir=hostkeys_dir(opts.shared_dir)),
                               setting="shared_dir") from None
    return path


def install_master_identity(opts: AgentOptions) -> Path | None:
    """With --identity: install the cluster key for the node user (see node/master.py); returns the
    published spec's path, which the lab gets as DSCLUSTER_CLUSTER."""
    if not opts.identity:
        return None
    from dscluster.node.master import install_identity

    return install_identity(Path(opts.identity), Path(opts.shared_dir), pwd.getpwnam(opts.user))


_LAB_BOOT = ("import sys\nfrom dscluster.node import lab\n"
             "proc = lab.start_lab(sys.argv[1], detach=False)\nsys.exit(proc.wait())\n")


def _spawn_as_user(opts: AgentOptions, argv: list[str], extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """A child of the agent that runs as the node user (never root), in its own session."""
    entry = pwd.getpwnam(opts.user)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSCLUSTER_HOME")}
    env.update(HOME=entry.pw_dir, USER=opts.user, LOGNAME=opts.user, **(extra_env or {}))
    return subprocess.Popen(argv, user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], env=env,
                            cwd=entry.pw_dir, stdin=subprocess.DEVNULL, start_new_session=True)


def start_lab_as_user(opts: AgentOptions, cluster_spec: Path | None = None) -> subprocess.Popen | None:
    """Hook for the master: JupyterLab (dscluster.node.lab, owned by the image/lab part) as the node user."""
    try:
        import dscluster.node.lab  # noqa: F401
    except ImportError:
        print(tr("dscluster node: JupyterLab support is not installed; skipping --lab"), file=sys.stderr)
        return None
    # Launches from the lab go across the cluster.
    env = {"DSCLUSTER_CLUSTER": str(cluster_spec)} if cluster_spec else None
    return _spawn_as_user(opts, [sys.executable, "-c", _LAB_BOOT, str(opts.shared_dir)], env)


_HUB_BOOT = ("import os, sys\nfrom dscluster.node import hub\n"
             "env = {k: os.environ[k] for k in ('DSCLUSTER_CLUSTER',) if k in os.environ}\n"
             "people = tuple(os.environ.get('DSCLUSTER_HUB_PEOPLE', '').split())\n"
             "proc, state = hub.start_hub(sys.argv[1], admins=tuple(sys.argv[2:]), environment=env, detach=False,\n"
             "                            people=people)\n"
             "sys.exit(proc.wait())\n")


def start_hub(opts: AgentOptions, cluster_spec: Path | None = None, people=None) -> subprocess.Popen | None:
    """On the master: JupyterHub on its 127.0.0.1:8000, as root (node/hub.py), the cluster's people from root's
    records (`people`, with --people; else `hub_people`); stopping it (SIGTERM from the supervisor)
    stops its proxy and everyone's JupyterLab."""
    from dscluster.cluster.identity import published_spec_path
    from dscluster.cluster.spec import load_spec

    published = cluster_spec or published_spec_path(opts.shared_dir)
    admins: list[str] = []
    env = dict(os.environ)
    if published.is_file():
        env.update(DSCLUSTER_CLUSTER=str(published))
    if people is None:
        people = hub_people(published, load_spec)
    if people:
        admins = [u.name for u in people if u.admin]
        env.update(DSCLUSTER_HUB_PEOPLE=" ".join(u.name for u in people))
    return subprocess.Popen([sys.executable, "-c", _HUB_BOOT, str(opts.shared_dir), *admins], env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def hub_people(published: Path, load_spec, records: Path | None = None) -> tuple:
    """The hub's people without --people (the simulated cluster, bare hosts): root's records on this machine
    (node/people.py; `user add` writes them, with who is an admin) of the people the published spec lists. The
    published spec is the node user's to write: it never makes anyone an admin, nor anyone a person."""
    from dscluster.node import people as records_of  # noqa: PLC0415

    recorded, _ = records_of.read_people(records or records_of.PEOPLE_DIR)
    try:
        listed = {u.name for u in load_spec(published).users} if published.is_file() else set()
    except DsclusterError:
        listed = set()
    return tuple(p for p in recorded or () if p.name in listed)


def start_stats_as_user(opts: AgentOptions) -> subprocess.Popen:
    """Every node publishes its GPU (NVML) or CPU/memory sample to <shared>/nodes/<node>.json, which the
    JupyterLab panel and the notebook API show live. As the node user: the shared dir is theirs."""
    return _spawn_as_user(opts, [sys.executable, "-m", "dscluster.node.stats", "--shared", str(opts.shared_dir),
                                 "--node", opts.node_name, "--interval", str(STATS_INTERVAL_S),
                                 "--metrics-port", str(opts.metrics_port), "--metrics-address", opts.metrics_address])


def start(opts: AgentOptions) -> int:
    """Prepare, then run sshd (and the lab on the master) in the foreground until stopped."""
    prepared = prepare(opts)
    sshd_mod.test_config(prepared.sshd, prepared.config)
    cluster_spec = install_master_identity(opts)
    keeper = None
    if opts.people:  # in a node container: the people's accounts before sshd serves them; the hub once any exist
        from dscluster.node.people import Keeper

        hub_wanted = opts.hub and opts.role == "master"
        keeper = Keeper(Path(opts.state_dir) / "homes",
                        on_first=(lambda found: start_hub(opts, cluster_spec, found)) if hub_wanted else None)
    supervisor = Supervisor()
    extra = keeper.tick() if keeper else []
    proc = subprocess.Popen(sshd_mod.sshd_argv(prepared.sshd, prepared.config), stdin=subprocess.DEVNULL)
    extra.append(start_stats_as_user(opts))
    if opts.lab and opts.role == "master":
        lab = start_lab_as_user(opts, cluster_spec)
        if lab:
            extra.append(lab)
    if opts.hub and opts.role == "master" and keeper is None:
        extra.append(start_hub(opts, cluster_spec))
    from dscluster.cluster.ssh import fingerprint

    print(tr("dscluster node: {name} ({role}) serving ssh on port {port} for {user}; host key {fp} published to {path}",
             name=opts.node_name, role=opts.role, port=opts.port, user=opts.user,
             fp=fingerprint(sshd_mod.host_public_key(prepared.host_key)), path=prepared.host_record),
          file=sys.stderr, flush=True)
    return supervisor.run(proc, extra, tick=keeper.tick if keeper else None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shared", dest="shared_dir", default=os.environ.get("DSCLUSTER_SHARED"),
                        help="the cluster's shared directory (same path on every node; holds cluster.pub)")
    parser.add_argument("--user", default=DEFAULT_USER, help="the non-root node user (default: %(default)s)")
    parser.add_argument("--port", type=int, default=DEFAULT_SSH_PORT, help="sshd port (default: %(default)s)")
    parser.add_argument("--role", choices=("master", "worker"), default="worker")
    parser.add_argument("--name", default="", help="this node's name in the cluster (default: its hostname)")
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help="root-owned directory for the host key and sshd config (default: %(default)s)")
    parser.add_argument("--listen", default=None, help="address sshd listens on (default: all)")
    parser.add_argument("--lab", action="store_true", help="on the master, also start JupyterLab")
    parser.add_argument("--hub", action="store_true",
                        help="on the master, also start JupyterHub (a JupyterLab per person of the cluster)")
    parser.add_argument("--metrics-port", type=int, default=9410,
                        help="Prometheus /metrics of this node's GPUs (NVML) and CPU/memory, served by the node "
                             "user (default: %(default)s; 0: off)")
    parser.add_argument("--metrics-address", default="0.0.0.0",
                        help="the address /metrics listens on (default: every interface, as node_exporter; give "
                             "the cluster-facing one to keep it off other networks)")
    parser.add_argument("--people", action="store_true",
                        help="in a node container: make the accounts of the cluster's people from root's records "
                             "in /etc/dscluster/people (the host's, mounted read-only), every few seconds")
    parser.add_argument("--identity", type=Path, default=None,
                        help="on the master: the cluster's private key file (e.g. a mounted secret), installed "
                             "for the node user so it can launch across the cluster")


def options_from_args(args: argparse.Namespace) -> AgentOptions:
    if not args.shared_dir:
        raise ConfigError(tr("no shared directory given"), tr("pass --shared DIR (or set DSCLUSTER_SHARED)"),
                          setting="shared_dir")
    if not 0 <= args.metrics_port <= 65535:
        raise ConfigError(tr("--metrics-port {port} is out of range", port=args.metrics_port),
                          tr("use 1024-65535 (default 9410), or 0 to turn /metrics off"), setting="--metrics-port")
    if not 1 <= args.port <= 65535:
        raise ConfigError(tr("--port {port} is out of range", port=args.port), tr("use 1-65535, e.g. 2222"),
                          setting="ssh_port")
    return AgentOptions(shared_dir=Path(args.shared_dir), user=args.user, port=args.port, role=args.role,
                        name=args.name, state_dir=args.state_dir, listen=args.listen, lab=args.lab, hub=args.hub,
                        identity=args.identity, people=args.people, metrics_port=args.metrics_port, metrics_address=args.metrics_address)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dscluster.node.agent")
    sub = parser.add_subparsers(dest="verb", required=True)
    add_arguments(sub.add_parser("start"))
    args = parser.parse_args(argv)
    try:
        return start(options_from_args(args))
    except DsclusterError as err:
        print(f"{tr('error')}: {err.message}", file=sys.stderr)
        if err.hint:
            print(f"  {tr('fix')}: {err.hint}", file=sys.stderr)
        return int(err.exit_code)


if __name__ == "__main__":
    sys.exit(main())

"""The cluster spec (`dscluster.toml`): typed, validated before anything connects.

    [cluster]
    name = "lab"                      # names the SSH identity: <home>/clusters/<name>/
    shared_dir = "/shared"            # the same path on every node (NFS)
    ssh_user = "trainer"              # the non-root node user (never root)
    ssh_port = 2222                   # the node agent's sshd port
    launcher = "pdsh"                 # pdsh | openmpi | slurm
    network_interface = "eth0"        # optional: the training NIC (NCCL_SOCKET_IFNAME)
    state_dir = "/path"               # optional: identity, ssh_config, known_hosts (default <home>/clusters/<name>/)

    [[nodes]]                         # in order: the first node is the master (rank 0)
    address = "10.0.0.1"
    slots = 8
    name = "gpu01"                    # optional, defaults to the address
    ssh_port = 2222                   # optional, defaults to [cluster].ssh_port

Every error names the file, the line, the key and the fix. Unknown keys are rejected with a
did-you-mean, because a misspelt `slot = 8` silently ignored is a wrong world size later.
A DeepSpeed hostfile is accepted wherever a spec is (`resolve_spec`).
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from dscluster import paths
from dscluster.errors import ConfigError
from dscluster.fsutil import read_user_text
from dscluster.i18n import tr

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_SSH_PORT = 2222
DEFAULT_USER = "dscluster"
SPEC_FILENAME = "dscluster.toml"
SIM_RUNTIME_ROOT = Path("/run/dscluster/sims")  # where running simulated clusters keep their state

_CLUSTER_KEYS = ("name", "shared_dir", "ssh_user", "ssh_port", "launcher", "network_interface", "state_dir",
                 "python", "engine", "node_uid")
ENGINES = ("docker", "podman")  # the container engines `up`/`down` drive on the hosts
_NODE_KEYS = ("address", "slots", "name", "ssh_port")
_TOP_KEYS = ("cluster", "nodes")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_USER_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")


@dataclass(frozen=True)
class NodeSpec:
    address: str
    slots: int
    name: str
    ssh_port: int = DEFAULT_SSH_PORT


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    nodes: tuple[NodeSpec, ...]
    shared_dir: Path
    ssh_user: str
    ssh_port: int = DEFAULT_SSH_PORT
    launcher: str = "pdsh"
    network_interface: str | None = None
    path: Path | None = None
    # The interpreter on the nodes (the node image's, e.g. /opt/dscluster/venv/bin/python). DeepSpeed's
    # runner starts the launching interpreter's own path on every node, so a launch from a machine with
    # another Python (a controller outside the containers) must name the nodes' one. None: the same path
    # as the launching interpreter (bare metal, one venv on shared storage).
    python: str | None = None
    # The container engine on the hosts (`up`, `down`); None: docker, unless --engine/DSCLUSTER_ENGINE.
    engine: str | None = None
    # The node user's UID on the nodes (the image's, e.g. 10001): a run directory made by root on the
    # controller is handed to it so the ranks can write there. None: the UID of a local ssh_user.
    node_uid: int | None = None
    # Where the identity, ssh_config and known_hosts live; None = <home>/clusters/<name>/.
    # The simulated cluster sets it so its spec is self-contained.
    state_dir: Path | None = field(default=None, compare=False)

    @property
    def master(self) -> NodeSpec:
        return self.nodes[0]

    @property
    def world_size(self) -> int:
        return sum(n.slots for n in self.nodes)

    def node(self, name_or_address: str) -> NodeSpec:
        for n in self.nodes:
            if name_or_address in (n.name, n.address):
                return n
        raise ConfigError(tr("no node {node!r} in cluster {cluster!r}", node=name_or_address, cluster=self.name),
                          tr("choose one of: {names}", names=", ".join(n.name for n in self.nodes)), setting="nodes")

    def hostfile_text(self) -> str:
        from dscluster.cluster.hostfile import format_hostfile

        return format_hostfile([(n.name, n.slots) for n in self.nodes])

    def to_dict(self) -> dict:
        return {
            "name": self.name, "shared_dir": str(self.shared_dir), "ssh_user": self.ssh_user,
            "ssh_port": self.ssh_port, "launcher": self.launcher, "network_interface": self.network_interface,
            "python": self.python, "engine": self.engine, "node_uid": self.node_uid,
            "path": str(self.path) if self.path else None, "state_dir": str(self.state_dir) if self.state_dir else None,
            "world_size": self.world_size,
            "nodes": [{"name": n.name, "address": n.address, "slots": n.slots, "ssh_port": n.ssh_port}
                      for n in self.nodes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> ClusterSpec:
        """The inverse of `to_dict` (a run record keeps the spec its run was launched on this way)."""
        return cls(name=str(data["name"]), shared_dir=Path(data["shared_dir"]), ssh_user=str(data["ssh_user"]),
                   ssh_port=int(data["ssh_port"]), launcher=str(data.get("launcher") or "pdsh"),
                   network_interface=data.get("network_interface"),
                   python=data.get("python"), engine=data.get("engine"),
                   node_uid=int(data["node_uid"]) if data.get("node_uid") is not None else None,
                   path=Path(data["path"]) if data.get("path") else None,
                   state_dir=Path(data["state_dir"]) if data.get("state_dir") else None,
                   nodes=tuple(NodeSpec(address=str(n["address"]), slots=int(n["slots"]), name=str(n["name"]),
                                        ssh_port=int(n["ssh_port"])) for n in data["nodes"]))


# --- locating keys in the text, so errors can name a line -------------------------------------------

def _key_line(text: str, key: str, table: str | None, index: int | None = None) -> int | None:
    """1-based line of `key = ...` inside `[table]` (or the index-th `[[table]]`); None if not found."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if table is not None:
        header = re.compile(r"^\s*\[\[\s*%s\s*\]\]" % re.escape(table) if index is not None
                            else r"^\s*\[\s*%s\s*\]" % re.escape(table))
        hits = [i for i, ln in enumerate(lines) if header.match(ln)]
        pos = index if index is not None else 0
        if pos >= len(hits):
            return None
        start = hits[pos] + 1
        nxt = [i for i, ln in enumerate(lines) if i >= start and re.match(r"^\s*\[", ln)]
        end = nxt[0] if nxt else len(lines)
        if key == "":
            return hits[pos] + 1
    pat = re.compile(r"^\s*[\"']?%s[\"']?\s*=" % re.escape(key))
    for i in range(start, end):
        if pat.match(lines[i]):
            return i + 1
    if table is None:  # an unknown top-level table: `[clustr]`
        header = re.compile(r"^\s*\[\[?\s*%s\s*\]" % re.escape(key))
        for i, ln in enumerate(lines):
            if header.match(ln):
                return i + 1
    return None


class _Ctx:
    """Builds ConfigErrors that name `path:line`, the key and the fix."""

    def __init__(self, text: str, path: Path | None):
        self.text, self.path = text, path

    def error(self, message: str, hint: str, *, key: str, table: str | None = None,
              index: int | None = None) -> ConfigError:
        line = _key_line(self.text, key.split(".")[-1], table, index) if self.text else None
        where = str(self.path) if self.path else SPEC_FILENAME
        if line:
            where += f":{line}"
        # nodes[1].slots, as a reader of the TOML would name it (not nodes.[1].slots)
        head = f"{table}[{index}]" if table and index is not None else table
        setting = ".".join(p for p in (head, key) if p)
        err = ConfigError(f"{where}: {setting}: {message}", hint, setting=setting)
        err.detail = message  # without the location, for callers that map settings to CLI flags
        return err


def _did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return tr("did you mean {key!r}? (allowed: {allowed})", key=close[0], allowed=", ".join(choices))
    return tr("remove it (allowed: {allowed})", allowed=", ".join(choices))


def _check_unknown(ctx: _Ctx, table: dict, allowed: tuple[str, ...], where: str | None, index: int | None = None):
    for key in table:
        if key not in allowed:
            raise ctx.error(tr("unknown key {key!r}", key=key), _did_you_mean(key, allowed),
                            key=key, table=where, index=index)


def _int(ctx: _Ctx, value, key: str, table: str | None, index: int | None, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(tr("must be a whole number, got {value!r}", value=value),
                        tr("write it without quotes, e.g. {key} = {lo}", key=key, lo=max(lo, 1)),
                        key=key, table=table, index=index)
    if not lo <= value <= hi:
        raise ctx.error(tr("{value} is out of range", value=value),
                        tr("use a value from {lo} to {hi}", lo=lo, hi=hi), key=key, table=table, index=index)
    return value


def _str(ctx: _Ctx, value, key: str, table: str | None, index: int | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ctx.error(tr("must be a non-empty string, got {value!r}", value=value),
                        tr('write it in quotes, e.g. {key} = "..."', key=key), key=key, table=table, index=index)
    return value.strip()


def check_address(address: str) -> str | None:
    """Why `address` cannot be an ssh target / hostfile host, or None when it is fine."""
    if "@" in address:
        return tr("{address!r} contains a user name: put the user in ssh_user, not in the address", address=address)
    if not _HOST_RE.match(address):
        return tr("{address!r} is not a host name or IP address", address=address)
    try:
        ipaddress.ip_address(address.strip("[]"))
        return None
    except ValueError:
        pass
    if ":" in address:
        return tr("{address!r} is not a valid IP address", address=address)
    return None


def parse_spec(text: str, path: Path | None = None) -> ClusterSpec:
    """Parse and validate a spec's text. Raises ConfigError naming the line, the key and the fix."""
    ctx = _Ctx(text, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where = str(path) if path else SPEC_FILENAME
        raise ConfigError(f"{where}: {tr('not valid TOML: {err}', err=err)}",
                          tr("fix the syntax at that line (strings need quotes, tables look like [cluster])"),
                          setting="toml") from None
    _check_unknown(ctx, data, _TOP_KEYS, None)
    cluster = data.get("cluster")
    if not isinstance(cluster, dict):
        raise ctx.error(tr("the [cluster] table is missing"),
                        tr('add:\n[cluster]\nname = "mycluster"\nshared_dir = "/shared"'), key="cluster")
    _check_unknown(ctx, cluster, _CLUSTER_KEYS, "cluster")
    name = _str(ctx, cluster.get("name", "default"), "name", "cluster")
    if not _NAME_RE.match(name):
        raise ctx.error(tr("{name!r} is not a valid cluster name", name=name),
                        tr("use letters, digits, '-', '_' or '.', starting with a letter or digit"),
                        key="name", table="cluster")
    if "shared_dir" not in cluster:
        raise ctx.error(tr("shared_dir is missing"),
                        tr('add shared_dir = "/path/on/every/node" (an NFS mount, the same path everywhere)'),
                        key="shared_dir", table="cluster")
    shared = _str(ctx, cluster["shared_dir"], "shared_dir", "cluster")
    if not os.path.isabs(shared):
        raise ctx.error(tr("{path!r} is not an absolute path", path=shared),
                        tr("the shared directory must be the same absolute path on every node, e.g. /shared"),
                        key="shared_dir", table="cluster")
    user = _str(ctx, cluster.get("ssh_user", DEFAULT_USER), "ssh_user", "cluster")
    if user == "root":
        raise ctx.error(tr("root is not allowed as the node user"),
                        tr("the node agent refuses root logins; use a non-root user, e.g. ssh_user = \"{u}\"",
                           u=DEFAULT_USER), key="ssh_user", table="cluster")
    if not _USER_RE.match(user):
        raise ctx.error(tr("{user!r} is not a valid user name", user=user),
                        tr("use lower-case letters, digits, '_' or '-'"), key="ssh_user", table="cluster")
    port = _int(ctx, cluster.get("ssh_port", DEFAULT_SSH_PORT), "ssh_port", "cluster", None, 1, 65535)
    launcher = _str(ctx, cluster.get("launcher", "pdsh"), "launcher", "cluster")
    from dscluster.launcher import backends  # noqa: PLC0415 - the registry of launcher backends

    if launcher not in backends.spec_names():
        raise ctx.error(tr("unknown launcher {launcher!r}", launcher=launcher),
                        _did_you_mean(launcher, backends.spec_names()),
                        key="launcher", table="cluster")
    iface = cluster.get("network_interface")
    if iface is not None:
        iface = _str(ctx, iface, "network_interface", "cluster")
        if not _IFNAME_RE.match(iface):
            raise ctx.error(tr("{iface!r} is not a network interface name", iface=iface),
                            tr("use the name `ip -br addr` shows on the nodes, e.g. eth0 or ib0"),
                            key="network_interface", table="cluster")
    state_dir = cluster.get("state_dir")
    if state_dir is not None:
        state_dir = Path(_str(ctx, state_dir, "state_dir", "cluster")).expanduser()
        if not state_dir.is_absolute() and path is not None:
            # Relative to the spec, like any path in a config file: not to wherever a command runs.
            state_dir = Path(path).parent / state_dir
    python = cluster.get("python")
    if python is not None:
        python = _str(ctx, python, "python", "cluster")
        if not os.path.isabs(python):
            raise ctx.error(tr("{path!r} is not an absolute path", path=python),
                            tr('python is the interpreter\'s path on every node, e.g. python = "{p}"',
                               p="/opt/dscluster/venv/bin/python"), key="python", table="cluster")
    engine = cluster.get("engine")
    if engine is not None:
        engine = _str(ctx, engine, "engine", "cluster")
        if engine not in ENGINES:
            raise ctx.error(tr("unknown container engine {engine!r}", engine=engine), _did_you_mean(engine, ENGINES),
                            key="engine", table="cluster")
    node_uid = cluster.get("node_uid")
    if node_uid is not None:
        node_uid = _int(ctx, node_uid, "node_uid", "cluster", None, 1, 2**31 - 1)
    nodes = _parse_nodes(ctx, data.get("nodes"), port)
    return ClusterSpec(name=name, nodes=nodes, shared_dir=Path(shared), ssh_user=user, ssh_port=port,
                       launcher=launcher, network_interface=iface, path=path, state_dir=state_dir, python=python,
                       engine=engine, node_uid=node_uid)


def _parse_nodes(ctx: _Ctx, raw, default_port: int) -> tuple[NodeSpec, ...]:
    if not raw:
        raise ctx.error(tr("no nodes"), tr('add one [[nodes]] table per node, master first:\n[[nodes]]\n'
                                            'address = "10.0.0.1"\nslots = 8'), key="nodes")
    if not isinstance(raw, list) or not all(isinstance(n, dict) for n in raw):
        raise ctx.error(tr("nodes must be [[nodes]] tables"), tr("write each node as a [[nodes]] table"), key="nodes")
    nodes: list[NodeSpec] = []
    seen: dict[str, int] = {}
    for i, node in enumerate(raw):
        _check_unknown(ctx, node, _NODE_KEYS, "nodes", i)
        if "address" not in node:
            raise ctx.error(tr("address is missing"), tr('add address = "host-or-ip" to this node'),
                            key="", table="nodes", index=i)
        address = _str(ctx, node["address"], "address", "nodes", i)
        if why := check_address(address):
            raise ctx.error(why, tr("use a host name or IP address the master can reach"),
                            key="address", table="nodes", index=i)
        if "slots" not in node:
            raise ctx.error(tr("slots is missing"), tr("add slots = N (the number of GPUs, or CPU ranks, to use)"),
                            key="", table="nodes", index=i)
        slots = _int(ctx, node["slots"], "slots", "nodes", i, 1, 1024)
        name = _str(ctx, node.get("name", address), "name", "nodes", i)
        if why := check_address(name):
            raise ctx.error(why, tr("a node name is an ssh target: letters, digits, '-', '.'"),
                            key="name", table="nodes", index=i)
        port = _int(ctx, node.get("ssh_port", default_port), "ssh_port", "nodes", i, 1, 65535)
        # A name or address may be an ssh target; each must point at exactly one node.
        for label, value in (("address", address), ("name", name)):
            first = seen.get(value)
            if first is not None:
                raise ctx.error(tr("{value!r} is listed twice (nodes {a} and {b})", value=value, a=first, b=i),
                                tr("remove the duplicate node; one [[nodes]] per machine, with all its slots"),
                                key=label, table="nodes", index=i)
        seen[address] = seen[name] = i
        nodes.append(NodeSpec(address=address, slots=slots, name=name, ssh_port=port))
    return tuple(nodes)


def load_spec(path: str | os.PathLike) -> ClusterSpec:
    path = Path(path)
    try:
        text = read_user_text(path, "cluster")
    except FileNotFoundError:
        raise ConfigError(tr("cluster spec {path} does not exist", path=path),
                          tr("create one with: dscluster init --node HOST[:SLOTS] ... --shared DIR"),
                          setting="cluster") from None
    except OSError as err:
        raise ConfigError(tr("cannot read {path}: {err}", path=path, err=err),
                          tr("check the file's permissions"), setting="cluster") from None
    return parse_spec(text, path.resolve())


SPEC_HEADER = "# dscluster cluster spec: the first node is the master (rank 0). `dscluster config show` prints it.\n"


def format_spec(spec: ClusterSpec) -> str:
    """The spec as TOML, written by a TOML library (tomli-w: every string escaped as TOML needs, a
    newline or a quote in a path included); `parse_spec` reads it back the same (a property test keeps it)."""
    import tomli_w  # noqa: PLC0415 - only where a spec is written

    cluster: dict = {"name": spec.name, "shared_dir": str(spec.shared_dir), "ssh_user": spec.ssh_user,
                     "ssh_port": spec.ssh_port, "launcher": spec.launcher}
    optional = {"network_interface": spec.network_interface, "state_dir": str(spec.state_dir) if spec.state_dir
                else None, "python": spec.python, "engine": spec.engine, "node_uid": spec.node_uid}
    cluster.update({k: v for k, v in optional.items() if v})
    nodes = []
    for n in spec.nodes:
        node: dict = {"address": n.address, "slots": n.slots}
        if n.name != n.address:
            node["name"] = n.name
        if n.ssh_port != spec.ssh_port:
            node["ssh_port"] = n.ssh_port
        nodes.append(node)
    # One table per section as users write them ([cluster], then a [[nodes]] table per node, master first):
    # the headers are fixed names; every key and value is the library's.
    return SPEC_HEADER + "[cluster]\n" + tomli_w.dumps(cluster) + "".join(
        "\n[[nodes]]\n" + tomli_w.dumps(node) for node in nodes)


def looks_like_toml_spec(text: str) -> bool:
    return bool(re.search(r"^\s*\[\s*cluster\s*\]|^\s*\[\[\s*nodes\s*\]\]", text, re.M))


def _read(path: Path, setting: str) -> str:
    try:
        return read_user_text(path, setting)
    except OSError as err:
        raise ConfigError(tr("cannot read {path}: {err}", path=path, err=err.strerror or err),
                          tr("check the path and the file's permissions"), setting=setting) from None


def spec_from_hostfile(path: str | os.PathLike, base: ClusterSpec | None = None) -> ClusterSpec:
    """A spec whose nodes come from a DeepSpeed hostfile.

    Settings (name, shared dir, user, port, identity) come from `base` when given (nodes it knows
    keep their address and port), else defaults: shared dir = the local shared dir, user = `dscluster`.
    """
    from dscluster.cluster.hostfile import parse_hostfile

    path = Path(path)
    entries = parse_hostfile(_read(path, "hostfile"), path=str(path))
    known = {n.name: n for n in base.nodes} | {n.address: n for n in base.nodes} if base else {}
    nodes = []
    for host, slots in entries:
        if host in known:
            nodes.append(replace(known[host], slots=slots))
        else:
            nodes.append(NodeSpec(address=host, slots=slots, name=host,
                                  ssh_port=base.ssh_port if base else DEFAULT_SSH_PORT))
    if base:
        return replace(base, nodes=tuple(nodes), path=path.resolve())
    return ClusterSpec(name=re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem) or "hostfile", nodes=tuple(nodes),
                       shared_dir=paths.local_shared(), ssh_user=DEFAULT_USER, path=path.resolve())


def sim_spec_path(name: str = "default") -> Path:
    return paths.home() / "sims" / name / SPEC_FILENAME


def _load_any(path: Path) -> ClusterSpec:
    if not path.exists():
        raise ConfigError(tr("{path} does not exist", path=path),
                          tr("pass a dscluster.toml or a DeepSpeed hostfile; create a spec with `dscluster init`"),
                          setting="cluster")
    if path.is_dir():
        path = path / SPEC_FILENAME
        return load_spec(path)
    text = _read(path, "cluster")
    if path.suffix == ".toml" or looks_like_toml_spec(text):
        return load_spec(path)
    base = None
    for candidate in (os.environ.get("DSCLUSTER_CLUSTER"), SPEC_FILENAME):
        if candidate and Path(candidate).is_file() and Path(candidate).resolve() != path.resolve():
            base = load_spec(candidate)
            break
    if base is None:
        base = _running_sim_of(text)
    return spec_from_hostfile(path, base)


def _running_sim_of(hostfile_text: str) -> ClusterSpec | None:
    """The running simulated cluster whose nodes are every host of a hostfile (by address or name), for
    its SSH settings: `dscluster launch --hostfile hostfile` with a hostfile of the simulated cluster's
    own IPs then reaches the nodes like `dscluster launch` does ("default" is looked at first)."""
    from dscluster.cluster.hostfile import parse_hostfile

    try:
        hosts = {h for h, _ in parse_hostfile(hostfile_text)}
    except ConfigError:
        return None
    sims = paths.home() / "sims"
    names = sorted((p.name for p in sims.iterdir() if p.is_dir()), key=lambda n: (n != "default", n)) \
        if sims.is_dir() else []
    for name in names:
        spec_path = sim_spec_path(name)
        if not (spec_path.is_file() and (SIM_RUNTIME_ROOT / name / "state.json").is_file()):
            continue
        try:
            sim = load_spec(spec_path)
        except ConfigError:
            continue
        if hosts and hosts <= {n.address for n in sim.nodes} | {n.name for n in sim.nodes}:
            return sim
    return None


def resolve_spec(arg: str | os.PathLike | None = None) -> ClusterSpec:
    """The cluster to act on: --cluster ARG (a dscluster.toml or a hostfile) > $DSCLUSTER_CLUSTER >
    ./dscluster.toml > the running simulated cluster "default"."""
    if arg:
        return _load_any(Path(arg))
    env = os.environ.get("DSCLUSTER_CLUSTER")
    if env:
        return _load_any(Path(env))
    if Path(SPEC_FILENAME).is_file():
        return load_spec(SPEC_FILENAME)
    sim = sim_spec_path("default")
    if sim.is_file() and (SIM_RUNTIME_ROOT / "default" / "state.json").is_file():  # up, not left from a reboot
        return load_spec(sim)
    raise ConfigError(tr("no cluster spec found"),
                      tr("pass --cluster dscluster.toml (or a hostfile), set DSCLUSTER_CLUSTER, create one with "
                         "`dscluster init`, or start a simulated cluster: dscluster sim up 3"), setting="cluster")


def with_cluster_setting(text: str, key: str, value: str | int) -> str:
    """The spec's text with `key = "value"` set in its [cluster] table, everything else (comments,
    order) kept: `up` records what it learned from the image (the nodes' interpreter) in the user's own
    spec this way. Pure; the result is checked to parse to the same spec plus the setting."""
    if key not in _CLUSTER_KEYS:
        raise ValueError(f"{key!r} is not a [cluster] setting")
    import tomli_w  # noqa: PLC0415

    line = tomli_w.dumps({key: value}).strip()  # one `key = value` line, the value escaped as TOML needs
    lines = text.splitlines()
    at = _key_line(text, key, "cluster")
    if at is not None:
        lines[at - 1] = line
    else:
        head = _key_line(text, "", "cluster")  # the [cluster] header's line
        if head is None:
            raise ValueError("the spec has no [cluster] table")
        lines.insert(head, line)
    out = "\n".join(lines) + "\n"
    if getattr(parse_spec(out), key) != value:
        raise ValueError(f"could not set {key} in the spec")
    return out

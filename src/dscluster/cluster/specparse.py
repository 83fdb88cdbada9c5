"""The spec's text validated: every error names the file, the line, the key and the fix; unknown keys are
refused with a did-you-mean (a misspelt `slot = 8` silently ignored is a wrong world size later)."""


from __future__ import annotations

import difflib
import ipaddress
import os
import re
import sys
from pathlib import Path

from dscluster.errors import ConfigError
from dscluster.i18n import tr

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from dscluster.cluster.specmodel import (
    _CLUSTER_KEYS,
    _HOST_RE,
    _IFNAME_RE,
    _NAME_RE,
    _NODE_KEYS,
    _PERSON_KEYS,
    _TOP_KEYS,
    _USER_RE,
    DEFAULT_SSH_PORT,
    DEFAULT_USER,
    ENGINES,
    PERSON_UID_MAX,
    PERSON_UID_MIN,
    SPEC_FILENAME,
    ClusterSpec,
    NodeSpec,
    UserSpec,
)

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
    optional = _optional_settings(ctx, cluster, path)
    nodes = _parse_nodes(ctx, data.get("nodes"), port)
    people = _parse_users(ctx, data.get("users", []), user)
    return ClusterSpec(name=name, nodes=nodes, shared_dir=Path(shared), ssh_user=user, ssh_port=port,
                       launcher=launcher, path=path, users=people, **optional)


def _optional_settings(ctx: _Ctx, cluster: dict, path: Path | None) -> dict:
    """[cluster]'s optional settings, validated: network_interface, state_dir, python, engine, node_uid."""
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
    return {"network_interface": iface, "state_dir": state_dir, "python": python, "engine": engine,
            "node_uid": node_uid}


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


def _parse_users(ctx: _Ctx, raw, node_user: str) -> tuple[UserSpec, ...]:
    """[[users]] tables: the people of the cluster (`dscluster user add`), each a name and a UID that is
    the same on every node; no name or UID twice, and none the node user's."""
    if not isinstance(raw, list) or not all(isinstance(u, dict) for u in raw):
        raise ctx.error(tr("users must be [[users]] tables"), tr("add people with: dscluster user add NAME"),
                        key="users")
    people: list[UserSpec] = []
    for i, entry in enumerate(raw):
        _check_unknown(ctx, entry, _PERSON_KEYS, "users", i)
        if "name" not in entry or "uid" not in entry:
            raise ctx.error(tr("a user needs a name and a uid"), tr('write e.g. name = "alice" and uid = 2001'),
                            key="", table="users", index=i)
        name = _str(ctx, entry["name"], "name", "users", i)
        if not _USER_RE.match(name) or name in ("root", node_user):
            raise ctx.error(tr("{user!r} is not a valid user name here", user=name),
                            tr("use lower-case letters, digits, '_' or '-', not root or the node user ({node})",
                               node=node_user), key="name", table="users", index=i)
        uid = _int(ctx, entry["uid"], "uid", "users", i, PERSON_UID_MIN, PERSON_UID_MAX)
        admin = entry.get("admin", False)
        if not isinstance(admin, bool):
            raise ctx.error(tr("must be true or false, got {value!r}", value=admin), tr("write admin = true"),
                            key="admin", table="users", index=i)
        for other in people:
            if name == other.name or uid == other.uid:
                raise ctx.error(tr("user {name!r} (uid {uid}) is listed twice", name=name, uid=uid),
                                tr("remove the duplicate: one [[users]] per person, each with its own uid"),
                                key="name", table="users", index=i)
        people.append(UserSpec(name=name, uid=uid, admin=admin))
    return tuple(people)

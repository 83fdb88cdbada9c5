"""The cluster spec (`dscluster.toml`): typed, validated before anything connects.

    [cluster]
    name = "lab"                      # names the SSH identity: <home>/clusters/<name>/
    shared_dir = "/shared"            # the same path on every node (NFS)
    ssh_user = "trainer"              # the non-root node user (never root)
    ssh_port = 2222                   # the node agent's sshd port
    launcher = "pdsh"                 # a launcher backend (`dscluster launch --help` lists them)
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

import os
import re
import sys
from dataclasses import replace
from pathlib import Path

from dscluster import paths
from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.usertext import read_user_text

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - exercised on 3.10 only
    pass

# The model and the parser, importable from here as ever.
from dscluster.cluster.specmodel import (  # noqa: F401
    _CLUSTER_KEYS,
    DEFAULT_SSH_PORT,
    DEFAULT_USER,
    ENGINES,
    SIM_RUNTIME_ROOT,
    SPEC_FILENAME,
    ClusterSpec,
    NodeSpec,
)
from dscluster.cluster.specparse import _key_line, check_address, parse_spec  # noqa: F401


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
        "\n[[nodes]]\n" + tomli_w.dumps(node) for node in nodes) + users_toml(spec.users)


def users_toml(users) -> str:
    """The [[users]] tables (`dscluster user add`), one per person, as tomli-w writes them."""
    import tomli_w  # noqa: PLC0415

    return "".join("\n[[users]]\n" + tomli_w.dumps({"name": u.name, "uid": u.uid, **({"admin": True} if u.admin
                                                                                          else {})})
                   for u in users)


def with_users(text: str, users) -> str:
    """The spec's text with its [[users]] tables replaced by `users`, everything else (comments, order) kept.
    Pure; the result is checked to parse to the same spec with those users."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        header = re.match(r"^\s*\[", line)
        if header:
            skipping = bool(re.match(r"^\s*\[\[\s*users\s*\]\]", line))
        if not skipping:
            kept.append(line)
    out = "\n".join(kept).rstrip("\n") + "\n" + users_toml(users)
    if parse_spec(out).users != tuple(users):
        raise ValueError("could not write the users into the spec")
    return out


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


def sim_is_up(name: str) -> bool:
    """Whether the simulated cluster `name` is up: its runtime state exists (gone after `sim down` and a
    reboot; a spec file alone can be left from either)."""
    return (SIM_RUNTIME_ROOT / name / "state.json").is_file()


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
            base = _checked_spec(Path(candidate).resolve())  # its python and users: yours or root's alone
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
        if not (spec_path.is_file() and sim_is_up(name)):
            continue
        try:
            sim = load_spec(spec_path)
        except ConfigError:
            continue
        if hosts and hosts <= {n.address for n in sim.nodes} | {n.name for n in sim.nodes}:
            return sim
    return None


def as_person(spec: ClusterSpec) -> ClusterSpec:
    """The spec as this process's user reaches the nodes: a person of the cluster (`dscluster user add`)
    logs in as themselves, with their own cluster identity (made by `user add` in their
    ~/.dscluster/clusters/NAME/), so their ranks run under their own UID on every node; anyone else as the
    spec's node user."""
    import pwd

    if os.geteuid() == 0:
        return spec
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return spec
    person = spec.person(name)
    if person is None or name == spec.ssh_user:
        return spec
    spec = _as_written_by_root(spec)
    person = spec.person(name) or person
    # They stand in the node user's place (ssh_user); the other people stay listed.
    return replace(spec, ssh_user=name, node_uid=person.uid, users=tuple(u for u in spec.users if u.name != name))


def _as_written_by_root(spec: ClusterSpec) -> ClusterSpec:
    """A person's launch takes the nodes, the Python (`python`) and who they are from the spec: read again by
    descriptor (fsutil's no-symlink rule), it must be root's or their own and writable by no one else. The
    published spec (<shared>/.dscluster/dscluster.toml) lies in a directory the node user can write: a copy the
    node user made (its python planted) is refused, never run as the person."""
    if spec.path is None or spec.path.suffix != ".toml":
        return spec
    return _checked_spec(spec.path)


def _checked_spec(path: Path) -> ClusterSpec:
    """The spec at `path`, read by descriptor, refused unless root's or this user's alone (see above)."""
    import stat

    from dscluster import fsutil
    from dscluster.errors import PermissionNeeded

    try:
        fd = fsutil.open_file(path)
        try:
            st, text = os.fstat(fd), os.read(fd, 1 << 20).decode("utf-8-sig")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError) as err:
        raise PermissionNeeded(tr("the cluster spec {path} cannot be read safely: {err}", path=path, err=err),
                               _ask_admin()) from None
    others_write = st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid not in (0, os.getegid()))
    if st.st_uid not in (0, os.geteuid()) or others_write or st.st_nlink != 1 or not stat.S_ISREG(st.st_mode):
        raise PermissionNeeded(tr("the cluster spec {path} is not root's (or yours) alone (uid {uid}, mode {mode:o}): "
                                  "your runs would take their Python and nodes from whoever wrote it",
                                  path=path, uid=st.st_uid, mode=stat.S_IMODE(st.st_mode)), _ask_admin())
    return parse_spec(text, path)


def _ask_admin() -> str:
    return tr("ask the cluster's administrator to publish it again as root (dscluster user add and sim up do), or "
              "pass --cluster with a copy of your own")


def resolve_spec(arg: str | os.PathLike | None = None, *, as_this_user: bool = True) -> ClusterSpec:
    """The cluster to act on: --cluster ARG (a dscluster.toml or a hostfile) > $DSCLUSTER_CLUSTER >
    ./dscluster.toml > the running simulated cluster "default"; as this user reaches it (`as_person`), or
    with `as_this_user=False` as the file says (`dscluster user`, which edits it)."""
    spec = _resolve(arg)
    return as_person(spec) if as_this_user else spec


def _resolve(arg: str | os.PathLike | None) -> ClusterSpec:
    if arg:
        return _load_any(Path(arg))
    env = os.environ.get("DSCLUSTER_CLUSTER")
    if env:
        return _load_any(Path(env))
    if Path(SPEC_FILENAME).is_file():  # found where you stand (the shared dir, maybe): yours or root's alone
        return _checked_spec(Path(SPEC_FILENAME).resolve())
    sim = sim_spec_path("default")
    if sim.is_file() and sim_is_up("default"):  # up, not left from a reboot
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

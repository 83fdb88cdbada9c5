"""`dscluster init`: write dscluster.toml from the command line and create the cluster's SSH identity."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from dscluster.cluster import identity
from dscluster.cluster.hostfile import parse_hostfile
from dscluster.cluster.spec import (
    DEFAULT_SSH_PORT,
    DEFAULT_USER,
    SPEC_FILENAME,
    ClusterSpec,
    NodeSpec,
    format_spec,
    parse_spec,
)
from dscluster.cluster.ssh import ensure_ssh_files
from dscluster.console import OK, WARN, next_steps
from dscluster.errors import ConfigError, UsageError
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr, tr_n
from dscluster.launcher import backends
from dscluster.usertext import read_user_text

# Spec settings -> the flag that sets them, so a bad value is reported against what the user typed.
_FLAGS = {"cluster.name": "--name", "cluster.shared_dir": "--shared", "cluster.ssh_user": "--user",
          "cluster.ssh_port": "--port", "cluster.launcher": "--launcher", "cluster.network_interface": "--interface",
          "cluster.python": "--python", "cluster.engine": "--engine"}
_NODE_ARG = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[^:\s]+)(?::(.*))?$")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("init", help=tr("create a cluster spec (dscluster.toml) and its SSH identity"),
                              description=tr("Writes dscluster.toml (nodes in order, the first is the master) and "
                                             "creates the cluster's ed25519 SSH identity (no passphrase, 0600)."))
    p.add_argument("--name", default="default", help=tr("cluster name (default: %(default)s)"))
    p.add_argument("--node", action="append", default=[], metavar="HOST[:SLOTS]",
                   help=tr("a node, master first; repeat for each node (slots default to 1)"))
    p.add_argument("--hostfile", help=tr("take the nodes from a DeepSpeed hostfile instead"))
    p.add_argument("--shared", required=True, metavar="DIR", help=tr("shared directory, same path on every node"))
    p.add_argument("--user", default=DEFAULT_USER, help=tr("non-root node user (default: %(default)s)"))
    p.add_argument("--port", type=int, default=DEFAULT_SSH_PORT, help=tr("node sshd port (default: %(default)s)"))
    p.add_argument("--launcher", default="pdsh", help=f"one of {', '.join(backends.spec_names())} (default: %(default)s)")
    p.add_argument("--interface", help=tr("training network interface on the nodes (e.g. eth0, ib0)"))
    p.add_argument("--engine", help=tr("container engine on the hosts for `dscluster up` (docker or podman; "
                                       "default: docker)"))
    p.add_argument("--python", metavar="PATH", help=tr("the interpreter on the nodes, when launches start outside "
                                                         "them (`dscluster up` records the image's)"))
    p.add_argument("-o", "--output", default=SPEC_FILENAME, help=tr("where to write the spec (default: %(default)s)"))
    p.add_argument("--force", action="store_true", help=tr("overwrite an existing spec (the identity is kept)"))
    p.set_defaults(func=cmd_init)


def parse_node_arg(text: str) -> tuple[str, int]:
    match = _NODE_ARG.match(text.strip())
    if not match:
        raise UsageError(tr("--node {value!r} is not HOST[:SLOTS]", value=text), tr("e.g. --node gpu01:8"))
    host, slots = match.group(1), match.group(2)
    if slots is None:
        return host, 1
    if not slots.isdigit() or int(slots) < 1:
        raise UsageError(tr("--node {value!r}: slots must be a whole number of 1 or more", value=text),
                         tr("e.g. --node {host}:8", host=host))
    return host, int(slots)


def build_spec(args: argparse.Namespace, output: Path) -> ClusterSpec:
    if bool(args.node) == bool(args.hostfile):
        raise UsageError(tr("give the nodes with --node HOST[:SLOTS] (repeated) or --hostfile FILE, not both"),
                         tr("dscluster init --node gpu01:8 --node gpu02:8 --shared /shared"))
    if args.hostfile:
        path = Path(args.hostfile)
        try:
            entries = parse_hostfile(read_user_text(path, "--hostfile"), path=str(path))
        except FileNotFoundError:
            raise UsageError(tr("hostfile {path} does not exist", path=path), tr("check the path")) from None
        except OSError as err:
            raise UsageError(tr("cannot read {path}: {err}", path=path, err=err.strerror or err),
                             tr("check the path and the file's permissions"), setting="--hostfile") from None
    else:
        entries = [parse_node_arg(n) for n in args.node]
    draft = ClusterSpec(name=args.name, nodes=tuple(NodeSpec(address=h, slots=s, name=h, ssh_port=args.port)
                                                    for h, s in entries),
                        shared_dir=Path(args.shared or "<empty>"), ssh_user=args.user, ssh_port=args.port,
                        launcher=args.launcher, network_interface=args.interface,
                        python=getattr(args, "python", None), engine=getattr(args, "engine", None))
    text = format_spec(draft)
    try:
        return parse_spec(text, output.resolve())  # the same validation as a hand-written spec
    except ConfigError as err:
        # A node's error is the flag's that gave the nodes: --hostfile's lines, or the --node values.
        node_flag = "--hostfile" if args.hostfile else "--node"
        flag = _FLAGS.get(err.setting or "", node_flag if (err.setting or "").startswith("nodes") else None)
        if flag:
            raise UsageError(f"{flag}: {getattr(err, 'detail', err.message)}", err.hint) from None
        raise


def check_output(path: Path) -> None:
    """-o must name a file in an existing directory: checked before anything is created, so a bad -o
    leaves no identity behind (a directory passes `exists()` and --force, and failed only at the write)."""
    if not path.absolute().parent.exists():  # a typo'd directory is not created on the user's behalf
        raise UsageError(tr("{dir} does not exist", dir=path.absolute().parent),
                         tr("create it first, or choose another path with -o FILE"), setting="--output")
    if path.is_dir():
        raise UsageError(tr("-o {path} is a directory", path=path),
                         tr("name the spec file: -o {file}", file=path / SPEC_FILENAME), setting="--output")


def write_output(path: Path, text: str) -> None:
    """Write a file the user named with -o; a bad path is a usage error, not a crash."""
    check_output(path)
    try:
        atomic_write_text(path, text)
    except OSError as err:
        raise UsageError(tr("cannot write {path}: {reason}", path=path, reason=err.strerror or err),
                         tr("choose a path you can write with -o FILE")) from None


def cmd_init(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if output.exists() and not args.force:
        raise UsageError(tr("{path} already exists", path=output),
                         tr("pass --force to overwrite it (the cluster identity is kept), or -o OTHER.toml"))
    check_output(output)
    spec = build_spec(args, output)
    # The identity first: a spec written without its key would make the retry say "already exists".
    try:
        key = identity.ensure_identity(spec)
        ensure_ssh_files(spec)
    except OSError as err:
        raise ConfigError(tr("cannot create the cluster's SSH identity in {dir}: {reason}",
                             dir=identity.cluster_state_dir(spec, create=False), reason=err.strerror or err),
                          tr("set DSCLUSTER_HOME to a directory you can write (default ~/.dscluster)"),
                          setting="DSCLUSTER_HOME") from None
    write_output(output, format_spec(spec))
    print(f"{OK} " + tr("wrote {path}: cluster {name!r}, {nodes}, {slots}, master {master}", path=output,
                         name=spec.name, nodes=tr_n(len(spec.nodes), "{n} node", "{n} nodes"),
                         slots=tr_n(spec.world_size, "{n} slot", "{n} slots"), master=spec.master.name))
    print(f"{OK} " + tr("SSH identity {key} (ed25519, private, 0600)", key=key))
    if spec.shared_dir.is_dir():
        pub = identity.publish_cluster_pubkey(spec)
        identity.publish_spec(spec)
        print(f"{OK} " + tr("published the public key to {path} for the node agents", path=pub))
    else:
        pub = identity.cluster_pubkey_path(spec.shared_dir)
        print(f"{WARN} " + tr("{shared} is not mounted here: copy {src} to {dest} on the shared storage",
                              shared=spec.shared_dir, src=str(key) + ".pub", dest=pub))
    start = f"dscluster node start --shared {shlex.quote(str(spec.shared_dir))} --user {spec.ssh_user} --port {spec.ssh_port}"
    print(next_steps(tr("on the master ({node}): {cmd} --role master --lab --identity <copy of {key}>",
                        node=spec.master.name, cmd=start, key=key),
                     tr("on every other node: {cmd}", cmd=start),
                     f"dscluster doctor --cluster {shlex.quote(str(output))}"))
    return 0

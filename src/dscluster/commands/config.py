"""`dscluster config show | hostfile | trust`: the resolved cluster spec, its hostfile, host-key pins."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dscluster.cluster.identity import cluster_state_dir, identity_path
from dscluster.cluster.spec import resolve_spec
from dscluster.cluster.ssh import ensure_ssh_files, read_known_hosts, ssh_config_path, sync_known_hosts
from dscluster.console import FAIL, OK, WARN, next_steps, table
from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr, tr_n


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config",
                                   help=tr("show the resolved cluster spec, write its hostfile, re-pin host keys"))
    verbs = parser.add_subparsers(dest="config_command", metavar="ACTION")

    def verb(name: str, help_: str, func) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, help=help_)
        p.add_argument("--cluster", "--hostfile", dest="cluster", help=tr("dscluster.toml or a DeepSpeed hostfile (default: $DSCLUSTER_CLUSTER, "
                                         "./dscluster.toml, the simulated cluster 'default')"))
        p.set_defaults(func=func)
        return p

    show = verb("show", tr("print the resolved spec (validated)"), cmd_show)
    show.add_argument("--json", action="store_true")
    hostfile = verb("hostfile", tr("write the DeepSpeed hostfile generated from the spec"), cmd_hostfile)
    hostfile.add_argument("-o", "--output", default="-", help=tr("file to write (default: stdout)"))
    hostfile.add_argument("--force", action="store_true", help=tr("overwrite an existing file that is not a hostfile"))
    trust = verb("trust", tr("re-pin the published host key of nodes re-created on purpose"), cmd_trust)
    trust.add_argument("nodes", nargs="*", help=tr("node names"))
    trust.add_argument("--all", action="store_true", help=tr("every node"))
    trust.add_argument("--scan", action="store_true",
                       help=tr("no shared directory here: pin the key each node presents now (trust on first use; "
                               "compare the fingerprints with `dscluster node start`'s log on the node)"))
    trust.add_argument("--yes", action="store_true", help=tr("with --scan: pin without asking"))
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_show(args: argparse.Namespace) -> int:
    spec = resolve_spec(args.cluster)
    data = spec.to_dict()
    state = cluster_state_dir(spec, create=False)
    pins = read_known_hosts(spec)
    data.update(identity=str(identity_path(spec)), identity_exists=identity_path(spec).exists(),
                ssh_config=str(ssh_config_path(spec)), pinned_host_keys=sorted(pins))
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{OK} " + tr("cluster {name!r} from {path}", name=spec.name, path=spec.path or "-"))
    settings = [["shared_dir", str(spec.shared_dir)], ["ssh_user", spec.ssh_user], ["ssh_port", str(spec.ssh_port)],
                ["launcher", spec.launcher], ["network_interface", spec.network_interface or "-"],
                ["world_size", str(spec.world_size)], ["state_dir", str(state)]]
    print(table([tr("setting"), tr("value")], settings))
    print()
    rows = [[str(i), n.name, n.address, str(n.slots), str(n.ssh_port), "master" if i == 0 else "worker",
             OK if n.name in pins else "-"] for i, n in enumerate(spec.nodes)]
    print(table(["#", tr("node"), tr("address"), tr("slots"), tr("ssh port"), tr("role"), tr("host key pinned")], rows))
    if not identity_path(spec).exists():
        print(f"{WARN} " + tr("no SSH identity yet at {path}", path=identity_path(spec)))
    print(next_steps(f"dscluster doctor --cluster {spec.path}" if spec.path else "dscluster doctor",
                     "dscluster config hostfile -o hostfile"))
    return 0


def _is_hostfile(path: Path) -> bool:
    from dscluster.cluster.hostfile import parse_hostfile
    from dscluster.usertext import read_user_text

    try:  # a device or a huge file is not a hostfile either (and must not be read to find out)
        return bool(parse_hostfile(read_user_text(path, "--output"), str(path)))
    except (ConfigError, OSError):
        return False


def cmd_hostfile(args: argparse.Namespace) -> int:
    spec = resolve_spec(args.cluster)
    text = spec.hostfile_text()
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    from dscluster.commands.init import write_output

    output = Path(args.output)
    if output.exists() and not args.force and not _is_hostfile(output):
        # Regenerating a hostfile is routine; overwriting anything else (the spec itself, say) is not.
        raise UsageError(tr("{path} already exists and is not a DeepSpeed hostfile", path=output),
                         tr("choose another file with -o, or pass --force to overwrite it"), setting="--output")
    write_output(output, text)
    print(f"{OK} " + tr("wrote {path} ({nodes}, {slots}; the first line is the master)", path=args.output,
                         nodes=tr_n(len(spec.nodes), "{n} node", "{n} nodes"),
                         slots=tr_n(spec.world_size, "{n} slot", "{n} slots")))
    print(next_steps(f"dscluster launch --hostfile {args.output} train.py "
                     "--deepspeed --deepspeed_config ds_config.json"))
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    spec = resolve_spec(args.cluster)
    if not args.nodes and not args.all:
        raise UsageError(tr("name the nodes to re-pin, or pass --all"), tr("dscluster config trust node1"))
    names = [n.name for n in spec.nodes] if args.all else [spec.node(n).name for n in args.nodes]
    ensure_ssh_files(spec)
    if args.scan:
        return _trust_scanned(spec, names, args.yes)
    report = sync_known_hosts(spec, trust=names)
    refused = report.missing + report.untrusted + report.changed
    for node in names:
        if node in report.missing:
            print(f"{FAIL} " + tr("{node}: no published host key (is its node agent running?)", node=node))
        elif node in report.untrusted or node in report.changed:
            # The record lies where the node user can write: its key is the node user's say-so.
            print(f"{FAIL} " + tr("{node}: its host key is published only where the node user can write; not "
                                  "pinned. Pin it from the node: dscluster config trust --scan {node}, and compare "
                                  "the fingerprint with the node agent's log", node=node))
        else:
            print(f"{OK} " + tr("{node}: host key pinned", node=node))
    print(next_steps(f"dscluster doctor --cluster {spec.path}" if spec.path else "dscluster doctor"))
    return 0 if not any(n in refused for n in names) else 1


def _trust_scanned(spec, names: list[str], yes: bool) -> int:
    """TOFU for controllers that cannot read the published keys: show fingerprints, pin on consent.
    A scanned key that differs from a published one is never pinned (someone is in the middle)."""
    from dscluster.cluster.runner import run_parallel
    from dscluster.cluster.ssh import fingerprint, pin_host_keys, published_keys_for, scan_host_key

    published = published_keys_for(spec, trusted_only=True)  # a record the node user could write proves nothing
    scanned = dict(zip(names, run_parallel(lambda n: scan_host_key(spec.node(n)), names)))
    good: dict[str, str] = {}
    for node, key in scanned.items():
        if key is None:
            print(f"{FAIL} " + tr("{node}: no answer from its sshd", node=node))
        elif node in published and published[node] != key:
            print(f"{FAIL} " + tr("{node}: presents {fp}, but published {pub}: not pinned (check the network path)",
                                  node=node, fp=fingerprint(key), pub=fingerprint(published[node])))
        else:
            print(f"{WARN} " + tr("{node}: {fp}", node=node, fp=fingerprint(key)))
            good[node] = key
    if good and not yes:
        if not sys.stdin.isatty():
            raise UsageError(tr("refusing to pin scanned host keys without confirmation"),
                             tr("compare the fingerprints above with each node's agent log, then add --yes"))
        if input(tr("pin these host keys? [y/N] ")).strip().lower() not in ("y", "yes"):
            return 1
    pin_host_keys(spec, good)
    for node in good:
        print(f"{OK} " + tr("{node}: host key pinned", node=node))
    print(next_steps(f"dscluster doctor --cluster {spec.path}" if spec.path else "dscluster doctor"))
    return 0 if len(good) == len(names) else 1

"""`dscluster sim hosts up N | down | status`: simulated bare hosts to run `dscluster up` against."""

from __future__ import annotations

import argparse
import time

from dscluster.console import OK, next_steps, table
from dscluster.i18n import tr


def register(verbs: argparse._SubParsersAction) -> None:
    parser = verbs.add_parser("hosts", help=tr("simulated bare hosts (your ssh + podman or docker) for dscluster up"),
                              description=tr("N hosts as network namespaces, each with its own IP and hostname and "
                                             "only your own sshd (root, key-only) running: what `dscluster up` "
                                             "finds on real servers. Containers that podman (or the host's own "
                                             "dockerd) starts from a login there live in that host's network. "
                                             "Needs root."))
    actions = parser.add_subparsers(dest="hosts_command", metavar="ACTION")

    def action(name: str, help_: str, func) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_)
        p.add_argument("--name", default="hosts", help=tr("which set of hosts (default: %(default)s)"))
        p.set_defaults(func=func)
        return p

    up = action("up", tr("create N bare hosts (replacing a set of the same name)"), cmd_up)
    up.add_argument("n", type=int, help=tr("number of hosts"))
    up.add_argument("--subnet", help=tr("private IPv4 /24 for the hosts (default: a free 10.2xx.y.0/24)"))
    up.add_argument("--engine", choices=("podman", "docker"), default="podman",
                    help=tr("the hosts' container engine: podman (default), or docker (a dockerd of its own on "
                            "each host)"))
    up.add_argument("--dir", help=tr("where keys, ssh_config and the shared directory go (default: "
                                     "<home>/sims/<name>-hosts)"))
    action("down", tr("remove the hosts: their sshd, anything left in their namespaces, the network"), cmd_down)
    action("status", tr("one line per host"), cmd_status)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_up(args: argparse.Namespace) -> int:
    from dscluster.sim.hosts import BareHosts

    started = time.monotonic()
    hosts = BareHosts.up(args.name, args.n, base=args.dir, subnet=args.subnet, engine=args.engine)
    print(f"{OK} " + tr("{n} simulated bare hosts {name!r}, your ssh to each works ({s:.1f} s)", n=len(hosts.hosts),
                         name=hosts.name, s=time.monotonic() - started))
    _print_table(hosts)
    nodes = " ".join(f"--node {a}:1" for a in hosts.addresses)
    load = [f"for h in {' '.join(hosts.addresses)}; do docker save IMAGE | ssh -F {hosts.ssh_config} $h docker load; "
            "done"] if hosts.engine == "docker" else []
    print(next_steps(
        f"export DSCLUSTER_HOST_SSH_CONFIG={hosts.ssh_config}",
        f"dscluster init --name {hosts.name} {nodes} --shared {hosts.shared_dir} --user dscluster "
        f"--engine {hosts.engine} --output {hosts.base}/dscluster.toml",
        *load,
        f"dscluster up --cluster {hosts.base}/dscluster.toml --image IMAGE --gpus none --ulimit none",
        f"dscluster sim hosts down --name {hosts.name}"))
    return 0


def _print_table(hosts) -> None:
    from dscluster.sim.procs import alive

    rows = [[h.name, h.address, h.netns, OK if alive(h.pid) else "-"] for h in hosts.hosts]
    print(table([tr("host"), tr("address"), tr("network namespace"), "sshd"], rows))
    print(tr("ssh config: {path}", path=hosts.ssh_config))
    print(tr("shared directory: {path}", path=hosts.shared_dir))


def cmd_down(args: argparse.Namespace) -> int:
    from dscluster.sim.hosts import BareHosts

    BareHosts.attach(args.name).down()
    print(f"{OK} " + tr("simulated bare hosts {name!r} removed", name=args.name))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from dscluster.sim.hosts import BareHosts

    _print_table(BareHosts.attach(args.name))
    return 0

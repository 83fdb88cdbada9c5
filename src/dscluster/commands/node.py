"""`dscluster node start`: the node agent (the image's entrypoint; also for bare metal)."""

from __future__ import annotations

import argparse

from dscluster.i18n import tr
from dscluster.node import agent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("node", help=tr("run the node agent on this node (sshd with the cluster's trust)"),
                                   description=tr("Runs on each node: a key-only sshd on its own port with its own host "
                                                  "key, trusting only the cluster key from the shared directory."))
    verbs = parser.add_subparsers(dest="node_command", metavar="ACTION")
    start = verbs.add_parser("start", help=tr("configure and run sshd in the foreground (SIGTERM stops it)"))
    agent.add_arguments(start)
    start.set_defaults(func=lambda args: agent.start(agent.options_from_args(args)))
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

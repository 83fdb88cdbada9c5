"""`dscluster node start`: the node agent (the image's entrypoint; also for bare metal)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

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
    ops = verbs.add_parser("build-ops", help=tr("compile the DeepSpeed ops a ds_config needs, once per node, before "
                                                "the first run"),
                           description=tr("A first run otherwise waits minutes while every rank compiles DeepSpeed's "
                                          "optimizer op, silently. Builds on the master first, then on the other nodes "
                                          "in parallel (a shared cache is filled once, never by two nodes at once)."))
    ops.add_argument("--deepspeed_config", "--deepspeed-config", metavar="FILE",
                     help=tr("the run's ds_config (default: the recipe's, optimizer Adam)"))
    ops.add_argument("--cluster", metavar="SPEC", help=tr("build on every node of this cluster (default: this machine)"))
    ops.set_defaults(func=cmd_build_ops)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_build_ops(args: argparse.Namespace) -> int:
    import sys  # noqa: PLC0415

    from dscluster import dsconfig  # noqa: PLC0415
    from dscluster.launcher import ops  # noqa: PLC0415

    config = dsconfig.load(args.deepspeed_config) if args.deepspeed_config else None
    if not args.cluster:
        return ops.build(config)
    from dscluster.cluster.runner import run_parallel  # noqa: PLC0415
    from dscluster.cluster.spec import resolve_spec  # noqa: PLC0415
    from dscluster.cluster.ssh import runners  # noqa: PLC0415
    from dscluster.console import FAIL, OK  # noqa: PLC0415

    nodes = runners(resolve_spec(args.cluster))
    argv = ops.build_argv(sys.executable, config)
    # The nodes' ninja must be this environment's (a different one rebuilds everything: its log format differs).
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"}
    if os.environ.get("TORCH_EXTENSIONS_DIR"):  # forwarded to the ranks by launch too: the same cache
        env["TORCH_EXTENSIONS_DIR"] = os.environ["TORCH_EXTENSIONS_DIR"]

    def one(runner):
        return runner.run(argv, env=env, timeout=3600)

    results = [one(nodes[0])] + run_parallel(one, nodes[1:])  # master first: see dscluster.launcher.ops
    for result in results:
        print(f"{OK if result.ok else FAIL} {result.node}")
        for line in (result.stdout + ("" if result.ok else result.stderr)).strip().splitlines()[-20:]:
            print(f"    {line}")
    return 0 if all(r.ok for r in results) else 1

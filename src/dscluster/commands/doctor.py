"""`dscluster doctor`: check every node of the cluster in parallel; one table, a fix for each ✗.

Exit status: 0 when every check passed (warnings allowed), 4 (ExitCode.CLUSTER) otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

from dscluster.commands.argtypes import PORT, positive_number
from dscluster.commands.backendargs import add_backend_options
from dscluster.errors import ConfigError, ExitCode, UsageError
from dscluster.i18n import tr


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help=tr("check every node: ssh, versions, GPUs, shared dir, ports, clocks, network"),
        description=tr("Check every node of the cluster in parallel before any GPU time is spent. Every "
                       "problem is named with its node and its fix. Exit status 4 when any check fails."))
    parser.add_argument("--cluster", "--hostfile", dest="cluster", help=tr("a dscluster.toml or a DeepSpeed hostfile (default: $DSCLUSTER_CLUSTER, "
                                          "./dscluster.toml, then the running simulated cluster)"))
    parser.add_argument("--collective", action="store_true",
                        help=tr("also run a real all-reduce across every slot (gloo on CPU, NCCL on GPU) "
                                "and report the bus bandwidth"))
    parser.add_argument("--collective-mb", type=positive_number, default=None,
                        help=tr("all-reduce buffer size in MiB (default 16 on CPU, 256 on GPU)"))
    parser.add_argument("--slow-fraction", type=positive_number, default=None, metavar="F",
                        help=tr("with --collective: name a node or link whose bandwidth is below F x the median of "
                                "the others (or F x its baseline on this cluster); default 0.5"))
    parser.add_argument("--master-port", type=PORT, default=None,
                        help=tr("the rendezvous port training will use (default 29500)"))
    parser.add_argument("--local", action="store_true",
                        help=tr("check this machine only (GPUs, versions, /dev/shm, JIT locks, TORCH_CUDA_ARCH_LIST); "
                                "the default when no cluster spec is found"))
    parser.add_argument("--fast", action="store_true", help=tr("shorter waits (what launch runs before starting)"))
    parser.add_argument("--json", action="store_true", help=tr("print the report as JSON (for scripts)"))
    parser.add_argument("-v", "--verbose", action="store_true", help=tr("also list every passing finding"))
    add_backend_options(parser, "doctor")
    parser.set_defaults(func=cmd_doctor)


def print_backend_checks(args: argparse.Namespace, results: list, row: str) -> int:
    """A backend's own checks (a scheduler's, asked by its option): one table, a fix for each failing or warned check; `row`
    (the backend's own row) is always shown."""
    from dscluster import console

    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2, ensure_ascii=False))
    else:
        shown = [r for r in results if args.verbose or r.status != "ok" or r.node == row]
        print(console.table([tr("node"), tr("check"), "", tr("finding")],
                            [[r.node, r.check, r.glyph, r.finding] for r in shown]))
        for r in results:
            if r.fix and r.status in ("fail", "warn"):
                print(f"{r.glyph} {r.node} {r.check}: {tr('fix')}: {r.fix}")
    return ExitCode.OK if all(r.ok for r in results) else ExitCode.CLUSTER


def cmd_doctor(args: argparse.Namespace) -> int:
    from dscluster.launcher import backends

    for backend in backends.every():
        if (asked := backend.doctor(vars(args))) is not None:
            return print_backend_checks(args, *asked)
    from dscluster.cluster.spec import resolve_spec
    from dscluster.doctor import DEFAULT_MASTER_PORT, render, run_doctor

    port = args.master_port if args.master_port is not None else DEFAULT_MASTER_PORT
    if not 1 <= port <= 65535:
        raise UsageError(tr("--master-port {port} is not a TCP port", port=port), tr("use a port in 1024-65535"))
    if args.collective_mb is not None and not 0 < args.collective_mb <= 4096:
        raise UsageError(tr("--collective-mb must be between 0 and 4096"), tr("for example --collective-mb 64"))
    if args.slow_fraction is not None and not 0 < args.slow_fraction < 1:
        raise UsageError(tr("--slow-fraction must be between 0 and 1"), tr("for example --slow-fraction 0.5"),
                         setting="--slow-fraction")
    if args.local and args.cluster:
        raise UsageError(tr("--local and --cluster contradict: --local checks this machine only"),
                         tr("drop one of them"), setting="--local")
    local = args.local
    if not local:
        try:
            spec = resolve_spec(args.cluster)
        except ConfigError:
            if args.cluster:
                raise
            local = True  # no spec and no simulated cluster: one machine (`launch --local N`)
            if not args.json:
                print(tr("no cluster spec found: checking this machine (dscluster doctor --local)"), file=sys.stderr)
    if local:
        from dscluster.doctor.local import run_local_doctor

        report = run_local_doctor(fast=args.fast, collective=args.collective, master_port=port,
                                  collective_mb=args.collective_mb)
    else:
        report = run_doctor(spec, fast=args.fast, collective=args.collective, master_port=port,
                            collective_mb=args.collective_mb, slow_fraction=args.slow_fraction)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(report, verbose=args.verbose))
    return ExitCode.OK if report.ok else ExitCode.CLUSTER

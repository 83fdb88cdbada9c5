"""`dscluster metrics config`: the Prometheus scrape config for a cluster (its nodes' agents, its runs)."""

from __future__ import annotations

import argparse
import json

from dscluster.i18n import tr


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("metrics", help=tr("Prometheus: what to scrape (node agents, running runs)"),
                                   description=tr("Every node agent serves its GPU/CPU figures at :9410/metrics; "
                                                  "every run's supervisor serves its steps, tokens/s, loss, "
                                                  "restarts, stalls, shrinks and checkpoint commits, and lists "
                                                  "itself in <shared>/prometheus/runs/ for file_sd."))
    verbs = parser.add_subparsers(dest="metrics_command", metavar="ACTION")
    cfg = verbs.add_parser("config", help=tr("print the scrape_configs for this cluster (prometheus.yml)"))
    cfg.add_argument("--cluster", "--hostfile", dest="cluster",
                     help=tr("a dscluster.toml or a DeepSpeed hostfile (default: as `dscluster doctor`)"))
    cfg.add_argument("--interval", default="15s", help=tr("scrape_interval (default: %(default)s)"))
    cfg.set_defaults(func=cmd_config)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def scrape_config(spec, interval: str = "15s") -> str:
    """YAML (JSON-compatible flow style for the values) for Prometheus's scrape_configs."""
    from dscluster.prom import NODE_PORT, runs_targets_dir

    groups = "\n".join(f"      - targets: [{json.dumps(f'{n.address}:{NODE_PORT}')}]\n"
                       f"        labels: {{node: {json.dumps(n.name)}, cluster: {json.dumps(spec.name)}}}"
                       for n in spec.nodes)
    runs = runs_targets_dir(spec.shared_dir) / "*.json"
    return (f"scrape_configs:\n"
            f"  - job_name: dscluster-nodes\n"
            f"    scrape_interval: {interval}\n"
            f"    static_configs:\n{groups}\n"
            f"  - job_name: dscluster-runs\n"
            f"    scrape_interval: {interval}\n"
            f"    file_sd_configs:\n"
            f"      - files: [{json.dumps(str(runs))}]\n"
            f"        refresh_interval: {interval}\n")


def cmd_config(args: argparse.Namespace) -> int:
    from dscluster.cluster.spec import resolve_spec

    print(scrape_config(resolve_spec(args.cluster), args.interval), end="")
    return 0

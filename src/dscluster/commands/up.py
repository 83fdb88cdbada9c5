"""`dscluster up` / `dscluster down`: the node image on every host of the cluster spec, over your own ssh."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from dscluster.cluster.spec import ClusterSpec, resolve_spec
from dscluster.commands.argtypes import seconds
from dscluster.console import FAIL, OK, WARN, next_steps, table
from dscluster.deploy import dockerrun
from dscluster.deploy import up as deploy
from dscluster.deploy.hosts import HostSSHRunner
from dscluster.i18n import current_language, tr


def register(subparsers: argparse._SubParsersAction) -> None:
    up = subparsers.add_parser("up", help=tr("start the node image on every host of the cluster (over your ssh)"),
                               description=tr("Checks every host first (Docker, GPUs, shared directory, ports), "
                                              "then starts the node container everywhere, or nowhere."))
    _common(up)
    up.add_argument("--image", default=os.environ.get("DSCLUSTER_IMAGE", dockerrun.DEFAULT_IMAGE),
                    help=tr("node image (default: %(default)s; env DSCLUSTER_IMAGE)"))
    up.add_argument("--gpus", default="all", help=tr("all (default), none (CPU-only hosts), or a device list 0,1"))
    up.add_argument("--shm-size", default="16g", help=tr("/dev/shm size for NCCL and data loaders (default: %(default)s)"))
    up.add_argument("--ipc-host", action="store_true",
                    help=tr("share the host's IPC namespace instead of --shm-size (weaker isolation)"))
    up.add_argument("--ulimit", action="append", default=[], metavar="NAME=V",
                    help=tr("container rlimits instead of memlock=-1 and stack=67108864 (repeatable); "
                            "none: the engine's defaults"))
    up.add_argument("--infiniband", choices=("auto", "yes", "no"), default="auto",
                    help=tr("pass /dev/infiniband: auto = on hosts that have it"))
    up.add_argument("--no-lab", action="store_true", help=tr("do not start JupyterLab on the master"))
    up.add_argument("--hub", action="store_true",
                    help=tr("also start JupyterHub on the master: a JupyterLab per person of dscluster user add "
                            "(the default once the spec has people)"))
    up.add_argument("--no-hub", action="store_true", help=tr("do not start JupyterHub, although the spec has people"))
    up.add_argument("--no-master-identity", action="store_true",
                    help=tr("do not give the master the cluster key (then runs cannot be launched from the master)"))
    up.add_argument("--lang", choices=("en", "zh_TW"), help=tr("language of node messages and the lab UI "
                                                          "(default: yours)"))
    up.add_argument("--wait", type=seconds, default=deploy.VERIFY_TIMEOUT_S,
                    help=tr("seconds to wait for every node's sshd (default: %(default)s)"))
    up.set_defaults(func=cmd_up)
    down = subparsers.add_parser("down", help=tr("stop and remove the node container on every host"))
    _common(down)
    down.add_argument("--purge", action="store_true", help=tr("also delete each node's state volume (its host key)"))
    down.set_defaults(func=cmd_down)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", "--hostfile", dest="cluster", help=tr("cluster spec (dscluster.toml) or hostfile; default: see `dscluster init`"))
    parser.add_argument("--host-user", help=tr("your login on the hosts, if your ~/.ssh/config does not set it"))
    parser.add_argument("--engine", choices=dockerrun.ENGINES, default=None,
                        help=tr("container engine on the hosts (default: env DSCLUSTER_ENGINE, else the spec's "
                                "engine, else docker)"))
    parser.add_argument("--host-ssh-config", metavar="FILE", default=os.environ.get("DSCLUSTER_HOST_SSH_CONFIG"),
                        help=tr("ssh_config for reaching the hosts instead of ~/.ssh/config "
                                "(env DSCLUSTER_HOST_SSH_CONFIG)"))
    parser.add_argument("--print", dest="print_only", action="store_true",
                        help=tr("print the exact commands for every host and run nothing"))


def _options(args: argparse.Namespace) -> dockerrun.DeployOptions:
    lang = args.lang or current_language()
    return dockerrun.DeployOptions(image=args.image, engine=args.engine, gpus=args.gpus, shm_size=args.shm_size, ipc_host=args.ipc_host,
                                   infiniband=args.infiniband, lab=not args.no_lab, ulimits=_ulimits(args.ulimit),
                                   hub=getattr(args, "hub", False),
                                   master_identity=not args.no_master_identity,
                                   lang=lang if lang != "en" else None).validate()


def _ulimits(given: list[str]) -> tuple[str, ...]:
    if not given:
        return dockerrun.DeployOptions.ulimits
    return () if given == ["none"] else tuple(given)


def _runner_factory(args: argparse.Namespace):
    return lambda node: HostSSHRunner(node.address, user=args.host_user, config=args.host_ssh_config)


def _print_commands(spec: ClusterSpec, commands: list[tuple[str, list[str]]]) -> None:
    for header, argv in commands:
        print(f"# {header}")
        print(shlex.join(argv))


def _spec(args: argparse.Namespace) -> ClusterSpec:
    """The spec, and the engine settled once: --engine, else DSCLUSTER_ENGINE, else the spec's, else docker."""
    spec = resolve_spec(args.cluster)
    args.engine = dockerrun.choose_engine(args.engine, os.environ.get("DSCLUSTER_ENGINE"), spec.engine)
    return spec


def _record_learned(spec: ClusterSpec, report: deploy.UpReport) -> None:
    """Write what `up` learned from the image into the controller's own spec (a line each in [cluster],
    the rest kept): its interpreter (`python`), so `dscluster launch` from here runs that one on the
    nodes, and its user's UID (`node_uid`), so the run directories made here are the ranks' to write."""
    if spec.path is None:
        return
    from dscluster.cluster.spec import with_cluster_setting
    from dscluster.fsutil import atomic_write_text

    learned = [(k, v) for k, v, have in (("python", report.python, spec.python),
                                         ("node_uid", report.node_uid, spec.node_uid)) if v and not have]
    if not learned:
        return
    path = Path(spec.path)
    try:
        text = path.read_text(encoding="utf-8")
        for key, value in learned:
            text = with_cluster_setting(text, key, value)
        atomic_write_text(path, text, path.stat().st_mode & 0o777)
    except (OSError, ValueError) as err:
        print(f"{WARN} " + tr("could not record {settings} in {path}: {err}", path=path, err=err,
                              settings=", ".join(f"{k} = {v}" for k, v in learned)), file=sys.stderr)
        return
    print(f"{OK} " + tr("recorded {settings} in {path}: launches from this machine run the image's interpreter "
                        "on the nodes, as its user", path=path, settings=", ".join(f"{k} = {v}" for k, v in learned)))


def cmd_up(args: argparse.Namespace) -> int:
    spec = _spec(args)
    if not args.no_hub:  # the master's agent starts JupyterHub once the cluster has people (`user add`, before
        args.hub = True  # or after `up`: node/people.py); until then one person has the single-user lab
    opts = _options(args)
    runner_for = _runner_factory(args)
    if args.print_only:
        commands = []
        print("# " + tr("before any of these, `up` checks every host over ssh: Docker, GPUs and the toolkit, "
                        "{shared}, free ports, the image", shared=spec.shared_dir))
        if opts.master_identity:
            from dscluster.cluster.identity import identity_path

            store = runner_for(spec.master).ssh_argv(dockerrun.identity_store_argv(spec, opts))
            print("# " + tr("{name} (master) {host}: the cluster key, through stdin only", name=spec.master.name,
                            host=spec.master.address))
            print(shlex.join(store) + " < " + shlex.quote(str(identity_path(spec))))
        for node in spec.nodes:
            role = dockerrun.role_of(spec, node)
            commands.append((tr("{name} ({role}) {host}: start", name=node.name, role=role, host=node.address),
                             runner_for(node).ssh_argv(dockerrun.docker_run_argv(spec, node, opts))))
        _print_commands(spec, commands)
        if opts.infiniband == "auto":
            print("# " + tr("--device /dev/infiniband is added on hosts where the preflight finds it"))
        return 0
    from dscluster.cluster.identity import identity_path, public_key

    pubkey = public_key(spec)  # before touching any host: no identity, no up
    identity_key = identity_path(spec).read_text(encoding="utf-8") if opts.master_identity else None
    print(tr("Checking {n} hosts of cluster {name} ...", n=len(spec.nodes), name=spec.name), flush=True)
    try:
        report = deploy.up(spec, opts, runner_for, pubkey, identity_key=identity_key, verify_timeout=args.wait)
    except deploy.UpFailed as failed:
        _print_report(spec, failed.report)
        raise
    _print_report(spec, report)
    _record_learned(spec, report)
    master = spec.master
    steps = [f"dscluster doctor --cluster {spec.path or spec.name}"]
    if opts.lab:
        steps.append(tr("ssh {host} {engine} exec --user {user} {container} dscluster lab url   "
                        "# JupyterLab URL + ssh -L line", host=master.address, engine=opts.engine,
                        user=spec.ssh_user, container=dockerrun.container_name(spec)))
    steps.append(f"dscluster down --cluster {spec.path or spec.name}")
    print(next_steps(*steps))
    return 0


def _print_report(spec: ClusterSpec, report: deploy.UpReport) -> None:
    bad = {p.node for p in report.problems + report.failed}
    rows = []
    for node, facts in zip(spec.nodes, report.facts):
        state = FAIL if node.name in bad else OK
        role = dockerrun.role_of(spec, node)
        if node.name in report.rolled_back:
            detail = tr("started, then removed (rollback)")
        elif node.name in report.started and node.name not in bad:
            detail = tr("running")
        elif node.name in bad:
            detail = tr("see below")
        else:
            detail = tr("ready") if not report.started else tr("not started")
        gpus = str(facts.gpus) if facts.reachable and facts.gpus >= 0 else "-"
        rows.append([state, node.name, node.address, role, gpus, detail])
    print(table(["", tr("node"), tr("host"), tr("role"), tr("GPUs"), tr("state")], rows), flush=True)
    for problem in report.problems + report.failed:
        print(f"{FAIL} {problem.node}: {problem.what}", file=sys.stderr)
        print(f"    {tr('fix')}: {problem.fix}", file=sys.stderr)


def cmd_down(args: argparse.Namespace) -> int:
    spec = _spec(args)
    runner_for = _runner_factory(args)
    if args.print_only:
        commands = []
        for node in spec.nodes:
            ssh = runner_for(node)
            commands.append((f"{node.name} {node.address}",
                             ssh.ssh_argv(dockerrun.docker_stop_argv(spec, engine=args.engine))))
            commands.append((f"{node.name} {node.address}",
                             ssh.ssh_argv(dockerrun.docker_rm_argv(spec, force=True, engine=args.engine))))
            if args.purge:
                commands.append((f"{node.name} {node.address}",
                                 ssh.ssh_argv(dockerrun.docker_volume_rm_argv(spec, engine=args.engine))))
        master = spec.master
        commands.append((f"{master.name} {master.address}", runner_for(master).ssh_argv(
            dockerrun.docker_volume_rm_argv(spec, dockerrun.identity_volume(spec), args.engine))))
        _print_commands(spec, commands)
        return 0
    results = deploy.down(spec, runner_for, purge=args.purge, engine=args.engine)
    glyph = {"removed": OK, "absent": OK, "failed": FAIL}
    words = {"removed": tr("stopped and removed"), "absent": tr("was not running"), "failed": tr("failed")}
    for node, result in zip(spec.nodes, results):
        line = f"{glyph[result.state]} {node.name} ({node.address}): {words[result.state]}"
        print(line + (f": {result.detail}" if result.detail else ""))
    failed = [r for r in results if r.state == "failed"]
    if failed:
        print(f"{WARN} " + tr("{n} hosts could not be cleaned up", n=len(failed)), file=sys.stderr)
        print(next_steps(f"dscluster down --cluster {spec.path or spec.name}"))
        return 4
    print(next_steps(f"dscluster up --cluster {spec.path or spec.name}"))
    return 0

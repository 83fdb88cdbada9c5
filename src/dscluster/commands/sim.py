"""`dscluster sim up N | down | status | exec NODE CMD | crash NODE | partition NODE | slow NODE | heal NODE`."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from dscluster.commands.argtypes import MAX_PROCS, count
from dscluster.console import FAIL, OK, WARN, next_steps, table
from dscluster.errors import UsageError
from dscluster.i18n import tr, tr_n


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sim", help=tr("a simulated multi-node cluster on this machine (needs root)"),
                                   description=tr("N nodes as Linux network namespaces, each with its own IP, hostname, "
                                                  "process table and the real node agent (sshd). Needs root."))
    verbs = parser.add_subparsers(dest="sim_command", metavar="ACTION")

    def verb(name: str, help_: str, func, node: bool = False) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, help=help_)
        p.add_argument("--name", default="default", help=tr("which simulated cluster (default: %(default)s)"))
        if node:
            p.add_argument("node", help=tr("node name, e.g. node1"))
        p.set_defaults(func=func)
        return p

    up = verb("up", tr("create N nodes (replacing a cluster of the same name)"), cmd_up)
    up.add_argument("n", type=int, help=tr("number of nodes"))
    up.add_argument("--subnet", help=tr("private IPv4 /24 for the nodes (default: a free 10.2xx.y.0/24)"))
    up.add_argument("--slots", type=count(1, MAX_PROCS), default=1, help=tr("slots per node in the spec (default: %(default)s)"))
    up.add_argument("--shared", help=tr("shared directory (default: <home>/sims/<name>/shared)"))
    up.add_argument("--lab", action="store_true", help=tr("also start JupyterLab on the master (as the node user), "
                                                          "with the cluster key installed so it can launch across nodes"))
    up.add_argument("--hub", action="store_true", help=tr("also start JupyterHub on the master (as root, on its "
                                                          "127.0.0.1:8000): a JupyterLab per person of dscluster user add"))
    up.add_argument("--slurm", action="store_true",
                    help=tr("also run a real Slurm: munge, slurmctld on the master, one slurmd per node, "
                            "a partition over all nodes"))
    down = verb("down", tr("remove the cluster: processes, namespaces, interfaces, state"), cmd_down)
    down.add_argument("--purge", action="store_true",
                      help=tr("also delete its logs and the shared directory it created (never one given with --shared)"))
    status = verb("status", tr("one line per node: running, link, ssh port"), cmd_status)
    status.add_argument("--json", action="store_true")
    ex = verb("exec", tr("run a command inside a node (as root unless --user)"), cmd_exec, node=True)
    ex.add_argument("--user", help=tr("run as this user (e.g. the node user)"))
    ex.add_argument("command", nargs=argparse.REMAINDER, help=tr("the command (after --)"))
    verb("crash", tr("kill every process on a node at once"), cmd_crash, node=True)
    verb("partition", tr("cut a node's network link"), cmd_partition, node=True)
    verb("freeze", tr("stop every process on a node (SIGSTOP): a node that hangs without closing a connection"),
         cmd_freeze, node=True)
    slow = verb("slow", tr("slow a node's link both ways (tc): a degraded NIC, cable or switch port"), cmd_slow,
                node=True)
    slow.add_argument("--rate", default="50mbit", help=tr("its bandwidth, tc units (default: %(default)s)"))
    slow.add_argument("--delay", default=None, help=tr("also delay its packets, e.g. 20ms (needs sch_netem)"))
    verb("heal", tr("restore a node's link (full speed), continue it if frozen, restart it if crashed"), cmd_heal,
         node=True)
    from dscluster.commands import simhosts  # bare hosts for `dscluster up`: their own module

    simhosts.register(verbs)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_up(args: argparse.Namespace) -> int:
    from dscluster.sim import SimCluster

    started = time.monotonic()
    sim = SimCluster.up(args.name, args.n, args.subnet, slots=args.slots, shared_dir=args.shared, lab=args.lab,
                        slurm=args.slurm, hub=args.hub)
    spec = sim.spec
    print(f"{OK} " + tr("simulated cluster {name!r}: {nodes} on {subnet}, ssh to every node works ({s:.1f} s)",
                         name=sim.name, nodes=tr_n(len(spec.nodes), "{n} node", "{n} nodes"), subnet=sim.subnet,
                         s=time.monotonic() - started))
    rows = [[n.name, n.address, str(n.slots), "master" if i == 0 else "worker"] for i, n in enumerate(spec.nodes)]
    print(table([tr("node"), tr("address"), tr("slots"), tr("role")], rows))
    print(tr("spec: {path}", path=spec.path))
    print(tr("shared directory: {path} (node user: {user})", path=spec.shared_dir, user=spec.ssh_user))
    for granted in sim.state.get("granted_traverse", []):
        print(tr("note: gave user {user} traverse-only access (ACL u:{user}:x) to {dir} so it can run {python}; "
                 "undo: setfacl -x u:{user} {dir}", user=spec.ssh_user, dir=granted, python=_python()))
    steps = [doctor_hint(sim.name, spec.path), f"dscluster sim exec{_name(sim.name)} node0 -- hostname"]
    if sim.state.get("slurm"):
        conf = sim.state["slurm"]["conf"]
        print(tr("Slurm: slurmctld on {node}, partition {part!r} over {n} nodes; its clients need "
                 "SLURM_CONF={conf}", node=spec.master.name, part=sim.state["slurm"]["partition"],
                 n=len(spec.nodes), conf=conf))
        steps = [f"export SLURM_CONF={conf}", "sinfo"] + steps
    if sim.state.get("lab"):
        from dscluster.cluster.ssh import ssh_config_path

        print(tr("JupyterLab is starting on {node} as {user}, on its 127.0.0.1:8888 (log: {log})",
                 node=spec.master.name,
                 user=spec.ssh_user, log=sim.log_path(0)))
        steps += [f"ssh -F {ssh_config_path(spec)} -N -L 8888:127.0.0.1:8888 {spec.master.name} &",
                  f"dscluster sim exec{_name(sim.name)} --user {spec.ssh_user} {spec.master.name} -- "
                  f"{_python()} -m dscluster.cli lab url"]
    if sim.state.get("hub"):
        print(tr("JupyterHub is starting on {node}, on its 127.0.0.1:8000 (log: {log})", node=spec.master.name,
                 log=sim.log_path(0)))
        steps += [f"dscluster user add NAME --cluster {spec.path}"]
    print(next_steps(*steps, f"dscluster sim down{_name(sim.name)}"))
    return 0


def doctor_hint(name: str, spec_path) -> str:
    """Plain `dscluster doctor` only where it would pick this cluster: $DSCLUSTER_CLUSTER and a
    ./dscluster.toml come before the simulated "default" in resolve_spec."""
    from dscluster.cluster.spec import SPEC_FILENAME

    if name == "default" and not os.environ.get("DSCLUSTER_CLUSTER") and not Path(SPEC_FILENAME).is_file():
        return "dscluster doctor"
    return f"dscluster doctor --cluster {spec_path}"


def _name(name: str) -> str:
    """` --name X` for the hints; nothing for the default cluster."""
    return "" if name == "default" else f" --name {name}"


def _python() -> str:
    import sys

    return sys.executable


def _active_runs(shared: Path, name: str) -> list[Path]:
    """The active runs of the simulated cluster `name` (its shared directory may hold others' runs)."""
    from dscluster.runs.preparing.start import shown_status
    from dscluster.runs.records import store
    from dscluster.runs.supervising.nodes import sim_name

    return [r.dir for r in store.list_runs(shared)
            if shown_status(r.record) in store.ACTIVE and sim_name(r.record) == name]


def _stop_runs_first(run_dirs: list[Path]) -> None:
    """Stop the cluster's active runs before its nodes go (all at once, each as `dscluster stop`): a
    supervisor left waiting for nodes that were removed would otherwise restart its run on the next
    cluster `sim up` makes at the same addresses. Their checkpoints stay; `restart` resumes them."""
    from concurrent.futures import ThreadPoolExecutor

    from dscluster.runs.supervising.control import stop_run

    for d in run_dirs:
        print(f"{WARN} " + tr("stopping run {id} first: its nodes go with the cluster (its checkpoints stay; "
                              "`dscluster restart {id}` resumes it on a new cluster)", id=d.name))

    def one(run_dir: Path) -> str | None:
        try:
            stop_run(run_dir)
        except Exception as err:  # noqa: BLE001 - reported; the cluster still goes
            return str(err)
        return None

    with ThreadPoolExecutor(max_workers=max(1, len(run_dirs))) as pool:
        errors = list(pool.map(one, run_dirs))
    for d, err in zip(run_dirs, errors):
        if err:
            print(f"{FAIL} " + tr("run {id} could not be stopped: {err}", id=d.name, err=err))


def cmd_down(args: argparse.Namespace) -> int:
    from dscluster.sim import down, leftovers

    started = time.monotonic()
    from dscluster.cluster.spec import sim_spec_path

    spec_path = sim_spec_path(args.name)
    existed = (any(leftovers(args.name).values()) or spec_path.exists()
               or (args.purge and spec_path.parent.exists()))
    shared = spec_path.parent / "shared"
    if spec_path.exists():  # `sim up --shared DIR` keeps its runs there
        from dscluster.cluster.spec import load_spec

        try:
            shared = Path(load_spec(spec_path).shared_dir)
        except Exception:  # noqa: BLE001 - a broken spec: the default place, and down goes on
            pass
    # (A whole-cluster loss is rehearsed with `sim crash` on every node: the supervisor waits for them.)
    _stop_runs_first(_active_runs(shared, args.name))
    down(args.name, purge=args.purge)
    if not existed:  # a typo'd --name must not read as "removed"
        print(f"{WARN} " + tr("no simulated cluster named {name!r} was up: nothing to remove", name=args.name))
        print(next_steps(f"dscluster sim up 3{_name(args.name)}"))
        return 0
    left = {k: v for k, v in leftovers(args.name).items() if v}
    if left:
        print(f"{FAIL} " + tr("left behind: {left}", left=left))
        return 1
    print(f"{OK} " + tr("simulated cluster {name!r} removed ({s:.1f} s)", name=args.name, s=time.monotonic() - started))
    if not args.purge and (shared / "runs").is_dir():
        print("  " + tr("its runs and checkpoints are kept in {path}: `dscluster runs` still lists them; "
                        "`dscluster sim down --purge` removes them", path=shared))
    print(next_steps(f"dscluster sim up 3{_name(args.name)}"))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from dscluster.sim import SimCluster

    sim = SimCluster.attach(args.name)
    rows = sim.status()
    if args.json:
        print(json.dumps({"name": sim.name, "subnet": sim.subnet, "spec": str(sim.spec_path), "nodes": rows}, indent=2))
        return 0 if all(r["ssh_port_open"] for r in rows) else 1
    mark = lambda ok: OK if ok else FAIL  # noqa: E731
    print(table([tr("node"), tr("address"), tr("running"), tr("link"), tr("ssh"), "pid"],
                [[r["node"], r["ip"], mark(r["running"]), mark(r["link_up"]) + (f" ({tr('slowed')})" if r.get("shaped")
                                                                                else ""),
                  mark(r["ssh_port_open"]), str(r["pid"] or "-")] for r in rows]))
    bad = [r["node"] for r in rows if not r["ssh_port_open"]]
    print(next_steps(*([f"dscluster sim heal{_name(sim.name)} {n}" for n in bad] or
                       [doctor_hint(sim.name, sim.spec_path)])))
    return 0 if not bad else 1


def cmd_exec(args: argparse.Namespace) -> int:
    from dscluster.sim import SimCluster

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError(tr("no command given"), tr("dscluster sim exec node0 -- hostname"))
    argv = SimCluster.attach(args.name).exec_argv(args.node, command, user=args.user)
    os.execvp(argv[0], argv)  # the node's command takes over this terminal and its exit code
    return 127  # not reached


def _fault(args: argparse.Namespace, action: str) -> int:
    from dscluster.sim import SimCluster

    sim = SimCluster.attach(args.name)
    getattr(sim, action)(args.node)
    messages = {"crash": tr("{node} crashed: every process on it was killed", node=args.node),
                "partition": tr("{node} is cut off the network (its processes keep running)", node=args.node),
                "freeze": tr("{node} is frozen: every process on it is stopped", node=args.node),
                "heal": tr("{node} is back: link up, node agent running", node=args.node)}
    print(f"{OK} " + messages[action])
    if action == "heal":
        later = f"dscluster sim status{_name(sim.name)}"
    else:
        later = f"dscluster sim heal{_name(sim.name)} {args.node}"
    print(next_steps(later))
    return 0


def cmd_crash(args):
    return _fault(args, "crash")


def cmd_partition(args):
    return _fault(args, "partition")


def cmd_freeze(args):
    return _fault(args, "freeze")


def cmd_heal(args):
    return _fault(args, "heal")


def cmd_slow(args: argparse.Namespace) -> int:
    from dscluster.sim import SimCluster

    sim = SimCluster.attach(args.name)
    sim.slow(args.node, args.rate, args.delay)
    what = args.rate + (f", +{args.delay}" if args.delay else "")
    print(f"{OK} " + tr("{node}'s link is slowed to {what} both ways", node=args.node, what=what))
    print(next_steps(f"{doctor_hint(sim.name, sim.spec_path)} --collective",
                     f"dscluster sim heal{_name(sim.name)} {args.node}"))
    return 0

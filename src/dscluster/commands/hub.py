"""`dscluster hub start|url|stop`: JupyterHub on the master, a JupyterLab per person (node/hub.py).

The people are the cluster's (`dscluster user add`); each logs in with the hub password printed to
whoever added them and gets their own JupyterLab, as their own OS user, with the DeepSpeed panel.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket

from dscluster.cluster.identity import published_spec_path
from dscluster.cluster.spec import resolve_spec
from dscluster.commands.argtypes import PORT
from dscluster.console import OK, WARN, next_steps
from dscluster.i18n import tr
from dscluster.node import hub, hubpass, lab


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("hub", help=tr("JupyterHub on the master, a JupyterLab per person: start, url, stop"),
                                   description=tr("JupyterHub on the master's 127.0.0.1 (or --public over TLS): "
                                                  "each person of the cluster logs in and gets their own "
                                                  "JupyterLab, as their own user, with the DeepSpeed panel."))
    verbs = parser.add_subparsers(dest="hub_command", metavar="ACTION")
    start = verbs.add_parser("start", help=tr("start JupyterHub (127.0.0.1:8000 by default)"))
    start.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec (dscluster.toml)"))
    start.add_argument("--port", type=PORT, default=hub.DEFAULT_PORT, help=tr("port (default 8000)"))
    start.add_argument("--public", action="store_true",
                       help=tr("serve it on every address over TLS, with a self-signed certificate made here"))
    start.add_argument("--foreground", action="store_true", help=tr("stay attached until Ctrl-C (containers)"))
    start.set_defaults(func=cmd_start)
    url = verbs.add_parser("url", help=tr("print the hub's URL and the ssh -L line"))
    url.add_argument("--ssh-host", help=tr("how your own machine reaches the master (default: its address in the "
                                           "cluster spec, else this host's name)"))
    url.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec (dscluster.toml)"))
    url.set_defaults(func=cmd_url)
    stop = verbs.add_parser("stop", help=tr("stop JupyterHub, its proxy and everyone's JupyterLab"))
    stop.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec (dscluster.toml)"))
    stop.set_defaults(func=cmd_stop)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def cmd_start(args: argparse.Namespace) -> int:
    spec = resolve_spec(args.cluster)
    environment = {}
    published = published_spec_path(spec.shared_dir)
    if published.is_file():  # the panel in each person's lab finds the cluster there
        environment["DSCLUSTER_CLUSTER"] = str(published)
    ip = "0.0.0.0" if args.public else "127.0.0.1"
    proc, state = hub.start_hub(spec.shared_dir, ip, args.port, public=args.public,
                                admins=tuple(u.name for u in spec.users if u.admin), environment=environment,
                                people=tuple(u.name for u in spec.users))
    try:
        hub.wait_ready(state, proc)
    except hub.HubError:
        hub.stop_hub()
        raise
    print(f"{OK} " + tr("JupyterHub is running at {url} (pid {pid}) for the {n} people of cluster {cluster}",
                         url=state.url, pid=state.pid, n=len(spec.users), cluster=spec.name))
    if state.tls:
        print(tr("its certificate is self-signed: check in the browser that its SHA-256 fingerprint is {fp}",
                 fp=state.fingerprint))
    if not spec.users:
        print(f"{WARN} " + tr("no one can log in yet: dscluster user add NAME"))
    print(tr("log: {log}", log=state.log_file))
    if args.foreground:
        return _wait_foreground(proc)
    print(next_steps("dscluster hub url", "dscluster hub stop"))
    return 0


def _wait_foreground(proc) -> int:
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        code = 0
    hub.stop_hub()
    return 0 if code in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else code


def cmd_url(args: argparse.Namespace) -> int:
    state = hub.running_state() or _in_master_container(args)
    if state is None:
        return _not_running()
    print(state.url + "hub/login")
    if state.tls:
        print(tr("its certificate's SHA-256 fingerprint: {fp}", fp=state.fingerprint))
    else:
        print(tr("From your own machine, open the tunnel first, then the URL above:"))
        for line in _tunnels(args, state):
            print("  " + line)
    print(tr("Each person logs in with their name and the hub password `dscluster user add` printed."))
    return 0


# Run as root in the master's node container: the running hub's state there (no secret in it), as JSON; or the
# hub stopped there (hub.stop_hub: its proxy and everyone's JupyterLab with it), the state it had.
_STATE_THERE = ("import dataclasses, json\nfrom dscluster.node import hub\ns = hub.running_state()\n"
                "print(json.dumps(dataclasses.asdict(s) if s else None))")
_STOP_THERE = _STATE_THERE.replace("hub.running_state()", "hub.stop_hub()")


def _in_master_container(args: argparse.Namespace, code: str = _STATE_THERE) -> hub.HubState | None:
    """The hub of `dscluster up`'s node containers, which the master's agent starts once the cluster has people:
    its state lives in that container (its state volume), read there (or, with _STOP_THERE, stopped there) as root
    over the operator's own ssh to the master host; its pid is the container's. None where the cluster has no
    node containers running (bare hosts, a simulated cluster) or no hub runs there. The agent does not start a
    stopped hub again: `dscluster up` does."""
    import json  # noqa: PLC0415

    from dscluster.commands.user import _host, is_simulated  # noqa: PLC0415
    from dscluster.errors import DsclusterError  # noqa: PLC0415

    try:
        spec = resolve_spec(args.cluster, as_this_user=False)
    except DsclusterError:
        return None
    if spec is None or not spec.nodes or is_simulated(spec):
        return None
    from dscluster.deploy import team  # noqa: PLC0415

    runner = _host(spec.master)
    engine = team.running_engine(spec, runner)
    done = team.in_container(spec, engine, runner, ["python", "-I", "-c", code]) if engine else None
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1]) if done is not None and done.ok else None
        return hub.HubState(**data) if data else None
    except (ValueError, TypeError, IndexError):
        return None


def _tunnels(args: argparse.Namespace, state: hub.HubState) -> list[str]:
    """The `ssh -L` lines that reach the hub's port: each person's (their key, the master's sshd port and
    address from the cluster spec), and this machine's operator's through the cluster's own ssh config when
    the hub runs in a simulated node. Without a spec: this host, as before."""
    from dscluster.errors import DsclusterError  # noqa: PLC0415

    try:
        spec = resolve_spec(args.cluster, as_this_user=False)
    except DsclusterError:
        spec = None
    if spec is None or not spec.nodes:
        return [lab.tunnel_line(state.port, args.ssh_host or socket.gethostname())]
    from dscluster.cluster.hostkeys import known_hosts_path  # noqa: PLC0415

    master = spec.master
    host = args.ssh_host or master.address
    pins = known_hosts_path(spec)
    # On this machine the cluster's pins check the master's host key (looked up under its name).
    options = (f"-o UserKnownHostsFile={shlex.quote(str(pins))} -o HostKeyAlias={master.name} "
               if os.access(pins, os.R_OK) else "")
    lines = []
    for person in spec.users:
        key = hubpass.private_key_of(person.name)
        line = lab.tunnel_line(state.port, host, person.name, master.ssh_port)
        lines.append(f"{person.name}: " + line.replace("ssh ", "ssh " + (f"-i {shlex.quote(key)} " if key else "")
                                                       + options, 1))
    if hub.elsewhere(state):  # a simulated node: the operator reaches it with the cluster's own ssh config
        from dscluster.cluster.ssh import ssh_config_path  # noqa: PLC0415

        config = ssh_config_path(spec)
        if config.is_file():
            lines.append(tr("this machine's operator: {line}",
                            line=f"ssh -F {shlex.quote(str(config))} -N -L {state.port}:127.0.0.1:{state.port} "
                                 f"{master.name}"))
    return lines or [lab.tunnel_line(state.port, host, None, master.ssh_port)]


def _not_running() -> int:
    import sys  # noqa: PLC0415

    print(f"{WARN} " + tr("JupyterHub is not running"), file=sys.stderr)
    print(next_steps("dscluster hub start"), file=sys.stderr)
    return 1


def cmd_stop(args: argparse.Namespace) -> int:
    stopped = hub.stop_hub()
    if stopped is not None:
        print(f"{OK} " + tr("JupyterHub stopped (pid {pid}), with its proxy and everyone's JupyterLab",
                            pid=stopped.pid))
        print(next_steps("dscluster hub start"))
        return 0
    stopped = _in_master_container(args, _STOP_THERE)  # dscluster up's node containers: the master's agent's hub
    if stopped is None:
        return _not_running()
    print(f"{OK} " + tr("JupyterHub stopped in the master's node container (pid {pid} there), with its proxy and "
                        "everyone's JupyterLab; `dscluster up` starts it again", pid=stopped.pid))
    print(next_steps("dscluster up"))
    return 0

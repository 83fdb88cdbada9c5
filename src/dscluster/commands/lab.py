"""`dscluster lab start|url|stop`: JupyterLab with secure defaults, outside the node image.

Inside the image the node agent starts the same server on the master (dscluster.node.lab.start_lab).
The token is printed only by `lab url`, to the terminal of the user who owns it, never logged.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from pathlib import Path

from dscluster import paths
from dscluster.commands.argtypes import PORT
from dscluster.console import OK, WARN, next_steps
from dscluster.i18n import tr
from dscluster.node import lab


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("lab", help=tr("JupyterLab on this machine: start, url, stop"),
                                   description=tr("JupyterLab bound to 127.0.0.1 with a random token, reached over ssh -L."))
    verbs = parser.add_subparsers(dest="lab_command", metavar="ACTION")
    start = verbs.add_parser("start", help=tr("start JupyterLab (127.0.0.1:8888 by default)"))
    start.add_argument("--ip", default=lab.DEFAULT_IP,
                       help=tr("address to bind (default 127.0.0.1; another address exposes it to that network)"))
    start.add_argument("--port", type=PORT, default=lab.DEFAULT_PORT, help=tr("port (default 8888)"))
    start.add_argument("--root-dir", help=tr("directory the file browser opens (default: the shared directory)"))
    start.add_argument("--foreground", action="store_true", help=tr("stay attached until Ctrl-C (containers)"))
    start.set_defaults(func=cmd_start)
    url = verbs.add_parser("url", help=tr("print the URL with its token (owner only) and the ssh -L line"))
    url.add_argument("--ssh-host", help=tr("how your own machine reaches this host (default: this host's name)"))
    url.add_argument("--ssh-user", help=tr("your login on that host, if your ssh config does not set it"))
    url.set_defaults(func=cmd_url)
    stop = verbs.add_parser("stop", help=tr("stop JupyterLab and delete its token"))
    stop.set_defaults(func=cmd_stop)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _root_dir(args: argparse.Namespace) -> Path:
    root = Path(args.root_dir) if args.root_dir else paths.local_shared()
    if not args.root_dir:
        root.mkdir(parents=True, exist_ok=True)  # the default shared dir is ours to create
    return root


def cmd_start(args: argparse.Namespace) -> int:
    root = _root_dir(args)
    proc = lab.start_lab(root, args.ip, args.port, detach=not args.foreground)
    state = lab.load_state()
    assert state is not None  # start_lab just wrote it
    try:
        lab.wait_ready(state, proc)
    except lab.LabError:
        lab.stop_lab()
        raise
    print(f"{OK} " + tr("JupyterLab is running at {url} (pid {pid}), serving {root}",
                         url=state.url, pid=state.pid, root=state.root_dir))
    if not lab.is_loopback(args.ip):
        print(f"{WARN} " + tr("bound to {ip}: anyone on that network can reach the login page; "
                              "the token still protects it, but prefer 127.0.0.1 with ssh -L", ip=args.ip))
    print(tr("log: {log}", log=state.log_file))
    if args.foreground:
        return _wait_foreground(proc)
    print(next_steps("dscluster lab url    # " + tr("the URL with its token, and the ssh -L line"),
                     "dscluster lab stop"))
    return 0


def _wait_foreground(proc) -> int:
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        code = proc.wait()
    lab.stop_lab()
    return 0 if code in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else code


def _not_running() -> int:
    print(f"{WARN} " + tr("JupyterLab is not running"), file=sys.stderr)
    print(next_steps("dscluster lab start"), file=sys.stderr)
    return 1


def cmd_url(args: argparse.Namespace) -> int:
    state = lab.running_state()
    if state is None:
        return _not_running()
    token = lab.read_token(state)
    # Printed, never logged: stdout belongs to the token's owner (the 0600 file proved who that is).
    print(f"{state.url}?token={token}")
    host = args.ssh_host or socket.gethostname()  # with --network host, the container's name is the host's
    if lab.is_loopback(state.ip):
        print(tr("From your own machine, open the tunnel first, then the URL above:"))
        print("  " + lab.tunnel_line(state.port, host, args.ssh_user))
    print(next_steps("dscluster lab stop"))
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    stopped = lab.stop_lab()
    if stopped is None:
        return _not_running()
    print(f"{OK} " + tr("JupyterLab stopped (pid {pid}); its token is deleted", pid=stopped.pid))
    print(next_steps("dscluster lab start"))
    return 0

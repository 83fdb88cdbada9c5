"""JupyterHub's configuration as dscluster starts it (node/hub.py starts and stops it): pure builders of
the hub's JSON config and of each person's JupyterLab config (the single-user lab's own, from
node/labconfig.py: the DeepSpeed panel, no update checks, the UI language). No secret is in either:
the cookie secret and the database are files of the 0700 private directory, the proxy's token is made
by JupyterHub and handed to the proxy in its environment."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from dscluster.node.labconfig import jupyter_config, panel_config
from dscluster.safepython import module_argv

SPAWN_TIMEOUT_S = 120  # for a person's lab to start, then to answer


@dataclass(frozen=True)
class HubPorts:
    """The public port (the proxy's) and the two internal ones, all on loopback but the public one."""

    port: int
    hub_port: int
    api_port: int


@dataclass(frozen=True)
class HubLayout:
    """Where a hub keeps what: `private` (0700, root's) and the readable single-user config."""

    home: Path
    private: Path
    singleuser_config: Path
    settings_dir: Path

    @classmethod
    def at(cls, home: Path) -> HubLayout:
        return cls(home=home, private=home / "private", singleuser_config=home / "singleuser" / "jupyter_config.json",
                   settings_dir=home / "singleuser" / "settings")


def singleuser_config(root_dir: str | os.PathLike, settings_dir: str | os.PathLike) -> dict:
    """Each person's JupyterLab: the single-user lab's config (panel, language, no update check) with the
    address, port and authentication left to JupyterHub, which sets them for every server it spawns."""
    config = jupyter_config("127.0.0.1", 0, root_dir, settings_dir, panel_config())
    server = config["ServerApp"]
    # root_dir too: JupyterHub hands each server its person's folder (Spawner.notebook_dir, person_dir).
    for hub_owned in ("ip", "port", "port_retries", "allow_remote_access", "allow_unauthenticated_access",
                      "root_dir"):
        server.pop(hub_owned, None)
    # The terminal: an interactive shell, not a login one, whose /etc/profile would put back the system's
    # PATH and lose the one the hub hands down (this Python's bin first: `dscluster`, `deepspeed`).
    # A terminal opened at the lab's root gets no cwd from the page and would start where the spawner put the
    # server (the person's home): it starts in their lab folder (JupyterHub's JUPYTERHUB_ROOT_DIR) instead.
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    server["terminado_settings"] = {"shell_command": [
        "/bin/sh", "-c", 'if [ "$PWD" = "$HOME" ] && [ -d "${JUPYTERHUB_ROOT_DIR:-}" ]; then '
                         'cd "$JUPYTERHUB_ROOT_DIR"; fi; exec "$0" -i', shell]}
    return config


def person_dir(shared_dir: str | os.PathLike) -> str:
    """Where each person's JupyterLab opens: their own folder on the shared storage (`user add` made it,
    theirs alone to write), not the shared root, which the node user writes: a module planted there would
    be imported by every kernel started in it. JupyterHub fills in {username}."""
    return str(Path(shared_dir) / "users" / "{username}")


def person_path(python: str | None = None) -> str:
    """The PATH of each person's server: this Python's bin first (`dscluster`, `deepspeed`, `jupyter`)."""
    bindir = str(Path(python or sys.executable).parent)
    rest = [d for d in os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":") if d and d != bindir]
    return ":".join([bindir, *rest])


def hub_config(layout: HubLayout, ip: str, ports: HubPorts, *, notebook_dir: str, admins: tuple[str, ...],
               environment: dict[str, str], tls: tuple[str, str] | None = None, python: str | None = None) -> dict:
    """JupyterHub's config as JSON: our authenticator, a local-process spawner per person (as their own
    OS user, opening in their own folder under `notebook_dir`, the shared directory), the hub and the
    proxy's API on loopback, the state in the private directory."""
    private = layout.private
    bindir = Path(python or sys.executable).parent
    config: dict = {
        "JupyterHub": {
            "ip": ip, "port": ports.port, "hub_ip": "127.0.0.1", "hub_port": ports.hub_port,
            "db_url": f"sqlite:///{private / 'jupyterhub.sqlite'}",
            "cookie_secret_file": str(private / "cookie_secret"),
            "pid_file": str(private / "jupyterhub.pid"),
            "authenticator_class": "dscluster.node.hubauth.DsclusterAuthenticator",
            "spawner_class": "jupyterhub.spawner.LocalProcessSpawner",
            "cleanup_servers": True, "cleanup_proxy": True,
            # The Python proxy hands a response on only once it is whole, so the "server is starting" page's
            # event stream never reaches the browser, which then waits there for ever: the login waits for
            # the person's lab instead (up to its start and answer timeouts) and goes straight to it.
            "tornado_settings": {"slow_spawn_timeout": SPAWN_TIMEOUT_S * 2},
        },
        "ConfigurableHTTPProxy": {
            "api_url": f"http://127.0.0.1:{ports.api_port}",
            # the Python configurable-http-proxy, with TLS on its public port for --public (node/hubproxy.py)
            "command": module_argv(python or sys.executable, "dscluster.node.hubproxy"),
            "pid_file": str(private / "proxy.pid"),
            "should_start": True,
        },
        "Authenticator": {"allow_all": True, "admin_users": sorted(admins)},
        "DsclusterAuthenticator": {"password_file": str(private / "passwords.json")},
        "Spawner": {
            "cmd": [str(bindir / "jupyterhub-singleuser")],
            "args": [f"--config={layout.singleuser_config}"],
            "notebook_dir": person_dir(notebook_dir), "default_url": "/lab",
            "environment": {"PATH": person_path(python), **environment},
            "start_timeout": SPAWN_TIMEOUT_S, "http_timeout": SPAWN_TIMEOUT_S,
        },
    }
    if tls:
        config["JupyterHub"].update({"ssl_cert": tls[0], "ssl_key": tls[1]})
    return config

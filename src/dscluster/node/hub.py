"""JupyterHub on the master: one login per person, and a JupyterLab for each, running as their own OS
user with the DeepSpeed panel (`dscluster hub start|url|stop`; the single-user `dscluster lab` stays).

What it guarantees:

- it runs as root (it must: it starts each person's server as that person) from `hub_home()`, and
  listens on 127.0.0.1 unless `--public`, which serves it over TLS with a self-signed certificate made
  here (its SHA-256 fingerprint printed, to compare in the browser);
- its state is in `private/` (0700): the sqlite database, the cookie secret, the password hashes
  (node/hubpass.py), the TLS key, its log; JupyterHub makes the proxy's token itself and hands it to
  the proxy in the environment: no secret is on a command line or in the config;
- stopping it stops the proxy and every person's server (JupyterHub's cleanup, then any left over).

Layout (`hub_home()`, <DSCLUSTER_HOME>/hub, 0711): singleuser/ (0755: each person's JupyterLab config,
no secret), private/ (0700: jupyterhub_config.json, jupyterhub.sqlite, cookie_secret, passwords.json,
hub.json, hub.log, tls.crt, tls.key, jupyterhub.pid, proxy.pid).
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from dscluster.errors import DsclusterError, PermissionNeeded
from dscluster.fsutil import atomic_write_json
from dscluster.i18n import current_language, tr
from dscluster.node import hubpass
from dscluster.node.hubconfig import HubLayout, HubPorts, hub_config, singleuser_config
from dscluster.node.lab import answers_ok, log_tail, pid_alive, port_is_free, server_alive, validate_address
from dscluster.node.labconfig import settings_overrides
from dscluster.safepython import module_argv

DEFAULT_PORT = 8000
# What would change the hub's secrets or config if inherited from the caller's shell.
_SCRUBBED_ENV = ("CONFIGPROXY_AUTH_TOKEN", "JPY_COOKIE_SECRET", "JUPYTERHUB_CRYPT_KEY", "JUPYTER_TOKEN",
                 "JUPYTER_TOKEN_FILE", "JUPYTER_PASSWORD", "JUPYTER_CONFIG_DIR", "JUPYTER_CONFIG_PATH")


class HubError(DsclusterError):
    """JupyterHub cannot be started, found or reached."""


@dataclass(frozen=True)
class HubState:
    """What `private/hub.json` records about a running hub. Never holds a secret."""

    pid: int
    ip: str
    port: int
    tls: bool
    fingerprint: str
    log_file: str
    config_file: str
    started: float
    # The pid namespace `pid` is counted in (a simulated node's own): the controller finds the hub's pid
    # as it sees it through this (`host_pid`). "": recorded before it was, this namespace.
    pid_ns: str = ""

    @property
    def url(self) -> str:
        import socket  # noqa: PLC0415

        host = socket.gethostname() if self.ip in ("0.0.0.0", "::") else self.ip  # --public: every address
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/"


def layout() -> HubLayout:
    return HubLayout.at(hubpass.hub_home())


def load_state(where: HubLayout | None = None) -> HubState | None:
    try:
        data = json.loads(((where or layout()).private / "hub.json").read_text(encoding="utf-8"))
        return HubState(**data)
    except (OSError, ValueError, TypeError):
        return None


def _pid_ns(pid: int | str = "self") -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return ""


def host_pid(pid: int, pid_ns: str) -> int | None:
    """The pid, as this machine sees it, of process `pid` of pid namespace `pid_ns` (the hub of a simulated
    cluster runs in its master node's own): /proc's NSpid lines list a process's pid in each namespace."""
    if not pid_ns or pid_ns == _pid_ns():
        return pid
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if _pid_ns(proc.name) != pid_ns:
                continue
            status = (proc / "status").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        nspid = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if nspid and nspid[-1] == str(pid):
            return int(proc.name)
    return None


def _is_our_hub(state: HubState) -> bool:
    pid = host_pid(state.pid, state.pid_ns)
    if pid is None or not pid_alive(pid):
        return False
    try:
        return state.config_file.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def running_state(where: HubLayout | None = None) -> HubState | None:
    """The running hub's state, its `pid` as this machine sees it (the hub may run in a simulated node)."""
    state = load_state(where)
    if state is None or not _is_our_hub(state):
        return None
    return replace(state, pid=host_pid(state.pid, state.pid_ns) or state.pid, pid_ns=_pid_ns())


def elsewhere(state: HubState) -> bool:
    """The hub runs in another network of this machine (a simulated node): its 127.0.0.1 is not ours."""
    try:
        pid = host_pid(state.pid, state.pid_ns) or state.pid
        return os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    except OSError:
        return False


def hub_installed(python: str | None = None) -> str | None:
    """What is missing to run the hub with this interpreter's environment, or None."""
    import importlib.util  # noqa: PLC0415

    bindir = Path(python or sys.executable).parent
    if importlib.util.find_spec("jupyterhub") is None:
        return "jupyterhub"
    if importlib.util.find_spec("configurable_http_proxy") is None:
        return "configurable-http-proxy"
    return None if (bindir / "jupyterhub-singleuser").exists() else "jupyterhub-singleuser"


def free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _check_can_start(ip: str, port: int) -> None:
    validate_address(ip, port)
    if os.geteuid() != 0:
        raise PermissionNeeded(tr("JupyterHub must start as root: it starts each person's JupyterLab as that person"),
                               tr("run it as root on the master: sudo dscluster hub start"))
    missing = hub_installed()
    if missing:
        raise HubError(tr("{tool} is not installed for {python}", tool=missing, python=sys.executable),
                       tr("install the hub extra: {python} -m pip install 'dscluster[hub]' (in a clone: "
                          "scripts/setup.sh test)", python=sys.executable))
    if running := running_state():
        raise HubError(tr("JupyterHub is already running (pid {pid}) at {url}", pid=running.pid, url=running.url),
                       tr("dscluster hub url   (or: dscluster hub stop)"))
    if not port_is_free(ip, port):
        raise HubError(tr("port {port} on {ip} is already in use", port=port, ip=ip),
                       tr("free it, or choose another port: --port {alt}", alt=port + 1), setting="port")


def _write_singleuser(where: HubLayout, notebook_dir: str, lang: str) -> None:
    """Each person's JupyterLab config and UI defaults: readable by them (no secret), writable by root only."""
    for d, mode in ((where.home, 0o711), (where.private, 0o700), (where.settings_dir.parent, 0o755),
                    (where.settings_dir, 0o755)):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, mode)
    atomic_write_json(where.settings_dir / "overrides.json", settings_overrides(lang), mode=0o644)
    atomic_write_json(where.singleuser_config, singleuser_config(notebook_dir, where.settings_dir), mode=0o644)


def start_hub(notebook_dir: str | os.PathLike, ip: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
              public: bool = False, admins: tuple[str, ...] = (), environment: dict[str, str] | None = None,
              lang: str | None = None, detach: bool = True,
              people: tuple[str, ...] = ()) -> tuple[subprocess.Popen, HubState]:
    """Start JupyterHub (detached: in its own session) and return it; `wait_ready` waits for it to answer.
    Not detached, it stays in its caller's process group (the node agent stops the group)."""
    _check_can_start(ip, port)
    where = layout()
    lang = lang or current_language()
    _write_singleuser(where, str(notebook_dir), lang)
    let_reach(where, people)
    tls, fingerprint = None, ""
    if public:
        from dscluster.node.hubtls import ensure_certificate  # noqa: PLC0415

        tls, fingerprint = ensure_certificate(where.private)
    ports = HubPorts(port=int(port), hub_port=free_port(), api_port=free_port())
    config_file = where.private / "jupyterhub_config.json"
    atomic_write_json(config_file, hub_config(where, ip, ports, notebook_dir=str(notebook_dir), admins=admins,
                                              environment=environment or {}, tls=tls), mode=0o600)
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    log_file = where.private / "hub.log"
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen([*module_argv(sys.executable, "jupyterhub"), "-f", str(config_file)],
                                stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.STDOUT, env=env,
                                cwd=str(where.private), start_new_session=detach)
    finally:
        os.close(fd)
    state = HubState(pid=proc.pid, ip=ip, port=int(port), tls=bool(tls), fingerprint=fingerprint,
                     log_file=str(log_file), config_file=str(config_file), started=time.time(), pid_ns=_pid_ns())
    atomic_write_json(where.private / "hub.json", asdict(state), mode=0o600)
    return proc, state


def let_reach(where: HubLayout, people: tuple[str, ...]) -> None:
    """Each person's server must reach this Python and the single-user config: root's directories in the
    way (a venv or DSCLUSTER_HOME under /root) get a traverse-only ACL entry for that person, as the
    node user gets one (sim/nodeuser.py); a name without an account here is skipped."""
    import pwd  # noqa: PLC0415

    from dscluster.sim.nodeuser import ensure_access  # noqa: PLC0415

    for name in people:
        try:
            ensure_access(pwd.getpwnam(name), where.settings_dir.parent)
        except KeyError:
            continue


def _probe_context(state: HubState) -> ssl.SSLContext | None:
    if not state.tls:
        return None
    context = ssl.create_default_context(cafile=str(layout().private / "tls.crt"))
    context.check_hostname = False  # the certificate names the master; the probe asks 127.0.0.1
    return context


def wait_ready(state: HubState, proc: subprocess.Popen | None = None, timeout: float = 120.0) -> None:
    """Wait until the hub answers through its proxy (`/hub/api`), or fail with its log tail."""
    host = "127.0.0.1" if state.ip in ("0.0.0.0", "127.0.0.1") else state.ip
    probe = f"{'https' if state.tls else 'http'}://{host if ':' not in host else f'[{host}]'}:{state.port}/hub/api"
    if answers_ok(probe, lambda: server_alive(proc, state.pid), timeout, per_try=3, context=_probe_context(state)):
        return
    raise HubError(tr("JupyterHub did not start at {url}; last log lines:\n{tail}", url=state.url,
                      tail=log_tail(Path(state.log_file))),
                   tr("read {log}, then: dscluster hub start", log=state.log_file))


def _kill_and_wait(pid: int, timeout: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not pid_alive(pid):
            return


def leftover_pids(where: HubLayout | None = None) -> list[int]:
    """Processes this hub started that are still running: the proxy and people's JupyterLabs."""
    where = where or layout()
    marks = (f"--config={where.singleuser_config}".encode(),)
    found = []
    state = load_state(where)
    try:
        proxy = int((where.private / "proxy.pid").read_text(encoding="ascii").strip())
        proxy = host_pid(proxy, state.pid_ns if state else "") or proxy  # JupyterHub wrote it in its namespace
        if b"dscluster.node.hubproxy" in Path(f"/proc/{proxy}/cmdline").read_bytes():
            found.append(proxy)
    except (OSError, ValueError):
        pass
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if any(m in cmdline for m in marks) and int(proc.name) not in found:
            found.append(int(proc.name))
    return found


def stop_hub(timeout: float = 20.0) -> HubState | None:
    """Stop the hub (it stops the proxy and the people's servers), then anything of it left over. Returns the
    hub that was running (its pid as this machine sees it), or None."""
    where = layout()
    state = running_state(where)  # its pid as this machine sees it (a simulated node's hub, from the controller)
    if state is not None:
        _kill_and_wait(state.pid, timeout)
    leftover = leftover_pids(where)
    for pid in leftover:
        _kill_and_wait(pid, 5.0)
    for name in ("hub.json", "jupyterhub.pid", "proxy.pid"):
        (where.private / name).unlink(missing_ok=True)
    return state


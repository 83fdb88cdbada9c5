"""JupyterLab on the master node, with secure defaults that cannot be forgotten.

The node agent (role master) calls `start_lab(...)`; `dscluster lab start` calls it outside the image.
What it guarantees:

- bound to 127.0.0.1 unless an address is given explicitly; reached through `ssh -L`;
- a fresh random token per start, written to a 0600 file in a 0700 directory and handed to Jupyter
  as JUPYTER_TOKEN_FILE (a path), so the token is never on a command line (`ps`, /proc/*/cmdline),
  never in an environment variable, never in an image; because Jupyter did not generate it, Jupyter
  prints `?token=...` instead of the token in its startup banner, so it is in no log either;
- XSRF checks on, no CORS origin, no root, no unauthenticated handlers (a forgotten decorator fails
  closed), no port hopping (a taken port is an error, not a surprise URL);
- the UI in Traditional Chinese when the user's locale asks for it: the language-pack locale is the
  default (`overrides.json`) and, unless the user already picked a language, their own setting (the
  file the Language menu writes), which is what the server translates menus with.

Layout (`lab_dir()`, default <DSCLUSTER_HOME>/lab/<hostname>, mode 0700): token (0600), jupyter_config.json,
settings/overrides.json, lab.json (pid, address; no token), lab.log (Jupyter's output).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from dscluster import paths
from dscluster.errors import ConfigError, DsclusterError, PermissionNeeded
from dscluster.fsutil import atomic_write_json, atomic_write_text
from dscluster.i18n import current_language, tr
from dscluster.node.labconfig import (  # noqa: F401 - the lab's configuration, importable from here as ever
    TRANSLATION_PLUGIN,
    ensure_user_locale,
    is_loopback,
    jupyter_config,
    lab_command,
    panel_config,
    settings_overrides,
    user_locale_setting,
)

DEFAULT_PORT = 8888
DEFAULT_IP = "127.0.0.1"
# Variables that would silently replace our token or config if inherited from the caller's shell.
_SCRUBBED_ENV = ("JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE", "JUPYTER_PASSWORD")


class LabError(DsclusterError):
    """JupyterLab cannot be started, found or reached."""


@dataclass(frozen=True)
class LabState:
    """What `lab.json` records about a running server. Never holds the token."""

    pid: int
    ip: str
    port: int
    root_dir: str
    token_file: str
    log_file: str
    lang: str
    started: float

    @property
    def url(self) -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"http://{host}:{self.port}/lab"


def lab_dir() -> Path:
    """Per host: home directories are often shared (NFS) across the nodes of a cluster."""
    return paths.home() / "lab" / socket.gethostname()


def validate_address(ip: str, port: int) -> None:
    """Reject a bad --ip/--port before anything starts, naming the setting and the fix."""
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        raise ConfigError(tr("lab address {ip!r} is not an IP address", ip=ip),
                          tr("use --ip 127.0.0.1 (the default) and reach it with ssh -L"), setting="ip") from None
    if not 1 <= int(port) <= 65535:
        raise ConfigError(tr("lab port {port} is out of range", port=port),
                          tr("use --port with a number from 1024 to 65535, e.g. 8888"), setting="port")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def port_is_free(ip: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((ip, port))
        except OSError:
            return False
    return True


def load_state(state_dir: Path | None = None) -> LabState | None:
    path = (state_dir or lab_dir()) / "lab.json"
    try:
        return LabState(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie we started but have not reaped is not running
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _is_our_server(state: LabState) -> bool:
    """The recorded pid is alive AND is the Jupyter started with this state's config (pids get reused)."""
    if not pid_alive(state.pid):
        return False
    try:
        cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc to ask: trust the pid
    return str(Path(state.token_file).parent / "jupyter_config.json").encode() in cmdline


def running_state(state_dir: Path | None = None) -> LabState | None:
    state = load_state(state_dir)
    return state if state and _is_our_server(state) else None


def root_refusal_fix(user: str = "dscluster") -> str:
    """How to start the lab when `lab start` ran as root: as the node user where the image (or `dscluster
    node start`) made one, else as any ordinary account, with this same program when that account can
    run it (a venv under /root cannot be: /root is 0700)."""
    import pwd  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    try:
        pwd.getpwnam(user)
        return tr("start it as the node user: runuser -u {user} -- dscluster lab start", user=user)
    except KeyError:
        pass
    program = shutil.which("dscluster") or str(Path(sys.executable).with_name("dscluster"))
    if not _others_can_run(Path(program)):
        return tr("start it from an ordinary (non-root) login with dscluster installed for that user: "
                  "pip install --user 'dscluster[jupyter]', then dscluster lab start ({program} is in a "
                  "directory other users cannot enter)", program=program)
    return tr("start it as an ordinary user: runuser -u USER -- {program} lab start (any non-root account; "
              "create one with: useradd -m USER)", program=program)


def _others_can_run(program: Path) -> bool:
    """Whether a user other than the owner can reach and execute `program` (o+x on it and every parent),
    and, for a script, its interpreter (a venv made from a Python under /root is not runnable by others)."""
    import stat  # noqa: PLC0415

    try:
        real = program.resolve(strict=True)
        if not all(os.stat(p).st_mode & stat.S_IXOTH for p in (real, *real.parents)):
            return False
        with open(real, "rb") as f:
            first = f.readline(512)
    except OSError:
        return False
    if first.startswith(b"#!") and first[2:].split():  # a console script: its interpreter must be reachable too
        interpreter = Path(os.fsdecode(first[2:].split()[0]))
        return interpreter == program or _others_can_run(interpreter)
    return True


def start_lab(shared_dir: str | os.PathLike, ip: str = DEFAULT_IP, port: int = DEFAULT_PORT, *,
              root_dir: str | os.PathLike | None = None, lang: str | None = None,
              state_dir: str | os.PathLike | None = None, python: str | None = None,
              detach: bool = True) -> subprocess.Popen:
    """Start JupyterLab serving `root_dir` (default: the shared directory); return its Popen.

    Writes a fresh token (0600) and the config under `state_dir` (default `lab_dir()`), Jupyter's
    output to <state_dir>/lab.log, and lab.json (no token). Does not wait for the server to answer:
    call `wait_ready(state)` for that. The caller owns the process (the node agent supervises it).
    """
    validate_address(ip, port)
    if os.geteuid() == 0:
        raise PermissionNeeded(tr("JupyterLab must not run as root: every notebook and terminal would be root"),
                               root_refusal_fix())
    if not jupyterlab_installed(python):
        # Checked before anything is written: otherwise the server dies at once and the user reads
        # "did not start" plus a log line, instead of what to install.
        raise LabError(tr("JupyterLab is not installed for {python}", python=python or sys.executable),
                       tr("install it into that environment: {python} -m pip install 'dscluster[jupyter]' "
                          "(in a clone of dscluster: -e '.[jupyter]'), then: dscluster lab start",
                          python=python or sys.executable))
    root = Path(root_dir or shared_dir)
    if not root.is_dir():
        raise ConfigError(tr("lab root directory {path} does not exist", path=root),
                          tr("create it or pass the cluster's shared directory"), setting="shared_dir")
    if running := running_state(Path(state_dir) if state_dir else None):
        raise LabError(tr("JupyterLab is already running (pid {pid}) at {url}", pid=running.pid, url=running.url),
                       tr("dscluster lab url   (or: dscluster lab stop)"))
    if not port_is_free(ip, port):
        raise LabError(tr("port {port} on {ip} is already in use", port=port, ip=ip),
                       tr("free it, or choose another port: --port {alt}", alt=port + 1), setting="port")
    lang = lang or current_language()
    state = _private_dir(Path(state_dir) if state_dir else lab_dir())
    settings = _private_dir(state / "settings")
    token_file = state / "token"
    atomic_write_text(token_file, new_token(), mode=0o600)  # no newline: Jupyter reads it verbatim
    atomic_write_json(settings / "overrides.json", settings_overrides(lang), mode=0o600)
    ensure_user_locale(lang)
    config_path = state / "jupyter_config.json"
    atomic_write_json(config_path, jupyter_config(ip, port, root.resolve(), settings, panel_config()), mode=0o600)
    argv, extra_env = lab_command(config_path, token_file, lang=lang, python=python)
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    env.update(extra_env)
    log_file = state / "lab.log"
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.STDOUT,
                                env=env, cwd=str(root), start_new_session=detach)
    except FileNotFoundError as err:
        raise LabError(tr("cannot start JupyterLab: {err}", err=err),
                       tr("pip install 'dscluster[jupyter]'")) from None
    finally:
        os.close(fd)
    record = LabState(pid=proc.pid, ip=ip, port=int(port), root_dir=str(root.resolve()),
                      token_file=str(token_file), log_file=str(log_file), lang=lang, started=time.time())
    atomic_write_json(state / "lab.json", asdict(record), mode=0o600)
    return proc


def jupyterlab_installed(python: str | None = None) -> bool:
    """Whether `python` (default: this interpreter) can import jupyterlab."""
    if python is None:
        import importlib.util

        return importlib.util.find_spec("jupyterlab") is not None
    try:
        probe = subprocess.run([python, "-c", "import importlib.util, sys; "
                                "sys.exit(importlib.util.find_spec('jupyterlab') is None)"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def wait_ready(state: LabState, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> None:
    """Wait until the server answers its unauthenticated version endpoint, or fail with its log tail."""
    probe = state.url.rsplit("/lab", 1)[0] + "/api"
    if answers_ok(probe, lambda: server_alive(proc, state.pid), timeout, per_try=2):
        return
    raise LabError(tr("JupyterLab did not start at {url}; last log lines:\n{tail}", url=state.url,
                      tail=log_tail(Path(state.log_file))),
                   tr("read {log}, then: dscluster lab start", log=state.log_file))


def server_alive(proc: subprocess.Popen | None, pid: int) -> bool:
    """A server we started (`proc`) has not exited; one found by its state file (`pid`) still runs."""
    return proc.poll() is None if proc is not None else pid_alive(pid)


def answers_ok(url: str, alive, timeout: float, *, per_try: float, context=None) -> bool:
    """Poll `url` until it answers 200 (True), or `alive()` turns False or `timeout` passes (False): how a
    JupyterLab or JupyterHub we start is waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            with urllib.request.urlopen(url, timeout=per_try, context=context) as resp:
                if resp.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    return False


def log_tail(path: Path, lines: int = 8) -> str:
    try:
        return "\n".join("    " + ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "    (no log)"


def read_token(state: LabState) -> str:
    """The token, for the owner only: the file is 0600, so anyone else gets a clear refusal."""
    try:
        return Path(state.token_file).read_text(encoding="utf-8").strip()
    except PermissionError:
        raise PermissionNeeded(tr("the lab token at {path} belongs to another user", path=state.token_file),
                               tr("run `dscluster lab url` as the user who started the lab")) from None
    except OSError:
        raise LabError(tr("the lab token file {path} is missing", path=state.token_file),
                       tr("restart the lab: dscluster lab stop && dscluster lab start")) from None


def tunnel_line(port: int, host: str, user: str | None = None, ssh_port: int | None = None) -> str:
    """The one `ssh -L` command that reaches a loopback-bound lab from the user's own machine."""
    target = f"{user}@{host}" if user else host
    port_opt = f"-p {ssh_port} " if ssh_port and ssh_port != 22 else ""
    return f"ssh -N {port_opt}-L {port}:127.0.0.1:{port} {target}"


def stop_lab(state_dir: Path | None = None, timeout: float = 15.0) -> LabState | None:
    """Stop the recorded server (SIGTERM, then SIGKILL) and delete its token. Returns what was stopped."""
    state_dir = state_dir or lab_dir()
    state = load_state(state_dir)
    if state and _is_our_server(state):
        try:
            os.killpg(state.pid, 15)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(state.pid, 15)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout
        while pid_alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid_alive(state.pid):
            os.kill(state.pid, 9)
    for name in ("lab.json", "token"):
        try:
            (state_dir / name).unlink()
        except FileNotFoundError:
            pass
    return state

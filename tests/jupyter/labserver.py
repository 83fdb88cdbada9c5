"""Start a real JupyterLab (with the dscluster server extension and the prebuilt panel) for tests.

Isolated: its own config/data/runtime/settings dirs, DSCLUSTER_HOME and shared dir under a temp dir,
a random token passed by a 0600 file. The extension and the panel are loaded through
`dscluster.jupyter.lab_config()` (what `dscluster lab` merges in), so this works with an editable
install, which installs no data-files, exactly like with a wheel.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from support import free_port

REPO = Path(__file__).resolve().parents[2]
LABEXT = REPO / "src" / "dscluster" / "jupyter" / "labextensions" / "dscluster"


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict = field(default_factory=dict)

    def json(self):
        return json.loads(self.body or b"null")


@dataclass
class LabServer:
    base: Path
    port: int
    token: str
    proc: subprocess.Popen
    log_path: Path
    env: dict

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def shared(self) -> Path:
        return Path(self.env["DSCLUSTER_SHARED"])

    def request(self, method: str, path: str, body=None, *, token: bool = True, headers: dict | None = None,
                opener=None, raw: bytes | None = None, timeout: float = 30) -> Response:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if method == "POST" and data is None:
            data = b"{}"
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"token {self.token}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with (opener or urllib.request.build_opener()).open(req, timeout=timeout) as r:
                return Response(r.status, r.read(), dict(r.headers))
        except urllib.error.HTTPError as e:
            return Response(e.code, e.read(), dict(e.headers))

    def api(self, method: str, path: str, body=None, **kw) -> Response:
        return self.request(method, "/dscluster/api/" + path.lstrip("/"), body, **kw)

    def cookie_opener(self):
        """An opener logged in by cookie (as a browser is), holding the _xsrf cookie too."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(f"{self.url}/lab?token={self.token}", timeout=30).read()
        return opener, jar

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        # What the server started in its session goes with it (TensorBoard, started by jupyter-server-proxy,
        # outlived the server otherwise), as the product's own lab stop does (node/lab.py: killpg).
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def start_lab(base: Path, *, extra_env: dict | None = None, timeout: float = 90) -> LabServer:
    base.mkdir(parents=True, exist_ok=True)
    dirs = {name: base / name for name in ("config", "data", "runtime", "settings", "workspaces", "root",
                                           "home", "shared", "jpath")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    from dscluster.jupyter import lab_config

    config = lab_config()
    config["LabApp"]["check_for_updates_class"] = "jupyterlab.NeverCheckForUpdate"
    config_file = base / "jupyter_lab_config.json"
    config_file.write_text(json.dumps(config))
    token = secrets.token_hex(24)
    token_file = base / "token"
    token_file.write_text(token)
    os.chmod(token_file, 0o600)
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUPYTER", "DSCLUSTER")) and k not in ("LANG", "LANGUAGE", "LC_ALL")}
    env.update({
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_PATH": str(dirs["jpath"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "JUPYTER_TOKEN_FILE": str(token_file),
        "DSCLUSTER_HOME": str(dirs["home"]),
        "DSCLUSTER_SHARED": str(dirs["shared"]),
        "PYTHONUNBUFFERED": "1",
        "LANG": "C.UTF-8",
    })
    env.update(extra_env or {})
    argv = [sys.executable, "-m", "jupyterlab", f"--config={config_file}", "--no-browser", "--ip=127.0.0.1",
            f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={dirs['root']}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log_path = base / "lab.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, env=env, cwd=dirs["root"], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    server = LabServer(base, port, token, proc, log_path, env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{server.log()}")
        try:
            if server.request("GET", "/api/status", timeout=5).status == 200:
                # No "get Jupyter news?" popup over the screenshots (and no attempt to reach the net).
                server.request("PUT", "/lab/api/settings/@jupyterlab/apputils-extension:notification",
                               {"raw": json.dumps({"fetchNews": "false"})})
                return server
        except OSError:
            pass
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"JupyterLab did not answer within {timeout}s:\n{server.log()}")

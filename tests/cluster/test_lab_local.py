"""`dscluster lab` against the real Jupyter server: auth, XSRF, CORS, zh-TW, extensions, no token leaks.

Jupyter refuses to run as root, and so does dscluster. CI runs as root, so the CLI runs in a user
namespace where it is uid 1000 (`unshare --user`): the real non-root code path, no mocks.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import socket
import stat
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support import VENV_CLI, free_port, run_cli

pytestmark = pytest.mark.slow


def _as_user_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    if not shutil.which("unshare"):
        pytest.skip("needs unshare (util-linux) to run JupyterLab as a non-root user")
    return ["unshare", "--user", "--map-user=1000", "--map-group=1000"]


class Lab:
    def __init__(self, base: Path):
        self.base = base
        self.home = base / "home"
        self.port = free_port()
        self.env = {**os.environ, "HOME": str(self.home), "DSCLUSTER_HOME": str(self.home / ".dscluster"),
                    "DSCLUSTER_SHARED": str(base / "shared"), "LANG": "zh_TW.UTF-8", "DSCLUSTER_LANG": "",
                    # A token inherited from the caller's shell must not replace ours.
                    "JUPYTER_TOKEN": "inherited-from-shell"}
        self.env.pop("LC_ALL", None)

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return run_cli("lab", *args, env=self.env, timeout=120, prefix=_as_user_prefix(), entry=VENV_CLI)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def state_dir(self) -> Path:
        return self.home / ".dscluster" / "lab" / socket.gethostname()


def _get(url: str, headers: dict | None = None, opener=None, data: bytes | None = None, method: str | None = None):
    req = urllib.request.Request(url, headers=headers or {}, data=data, method=method)
    try:
        with (opener or urllib.request.build_opener()).open(req, timeout=15) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode(errors="replace")


@pytest.fixture(scope="module")
def running_lab(tmp_path_factory):
    lab = Lab(tmp_path_factory.mktemp("lab"))
    started = lab.cli("start", "--port", str(lab.port))
    assert started.returncode == 0, started.stderr + started.stdout
    url_out = lab.cli("url", "--ssh-host", "gpu1")
    assert url_out.returncode == 0, url_out.stderr
    token = url_out.stdout.split("?token=", 1)[1].split()[0]
    lab.token = token
    lab.start_out, lab.url_out = started, url_out
    lab.pid = json.loads((lab.state_dir / "lab.json").read_text())["pid"]
    yield lab
    lab.cli("stop")


def test_token_file_is_private_and_fresh(running_lab):
    token_file = running_lab.state_dir / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(running_lab.state_dir.stat().st_mode) == 0o700
    assert token_file.read_text() == running_lab.token
    assert running_lab.token != "inherited-from-shell" and len(running_lab.token) >= 40


def test_url_prints_the_tunnel(running_lab):
    assert f"ssh -N -L {running_lab.port}:127.0.0.1:{running_lab.port} gpu1" in running_lab.url_out.stdout
    assert running_lab.url_out.stdout.startswith(f"http://127.0.0.1:{running_lab.port}/lab?token=")


def test_unauthenticated_and_wrong_token_are_refused(running_lab):
    api = f"{running_lab.url}/api/contents"
    assert _get(api)[0] == 403
    assert _get(api, {"Authorization": "token wrong-token"})[0] == 403
    assert _get(f"{api}?token=wrong-token")[0] == 403
    assert _get(api, {"Authorization": "token inherited-from-shell"})[0] == 403
    status, _, body = _get(api, {"Authorization": f"token {running_lab.token}"})
    assert status == 200 and json.loads(body)["type"] == "directory"
    # The page itself sends an anonymous visitor to the login form, not into the lab.
    status, _, body = _get(f"{running_lab.url}/lab")
    assert status == 200 and "password" in body.lower() and "jupyter-config-data" not in body


def test_xsrf_is_checked_for_cookie_sessions(running_lab):
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    assert _get(f"{running_lab.url}/lab?token={running_lab.token}", opener=browser)[0] == 200
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    new_file = json.dumps({"type": "file"}).encode()
    status, _, _ = _get(f"{running_lab.url}/api/contents", opener=browser, data=new_file, method="POST",
                        headers={"Content-Type": "application/json"})
    assert status == 403  # logged-in cookie, but no XSRF token: refused
    status, _, _ = _get(f"{running_lab.url}/api/contents", opener=browser, data=new_file, method="POST",
                        headers={"Content-Type": "application/json", "X-XSRFToken": xsrf})
    assert status == 201


def test_no_cross_origin_access_for_browser_sessions(running_lab):
    # allow_origin stays "": a page on another origin gets no CORS grant for the user's logged-in
    # session. (Jupyter lets a request that itself carries the token cross origins: the token is
    # the credential then, and a foreign page that has it needs no CORS to do harm.)
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    assert _get(f"{running_lab.url}/lab?token={running_lab.token}", opener=browser)[0] == 200
    status, headers, _ = _get(f"{running_lab.url}/api/contents", {"Origin": "http://evil.example"}, opener=browser)
    assert status in (403, 404) and not headers.get("Access-Control-Allow-Origin")  # Jupyter blocks with 404
    assert _get(f"{running_lab.url}/api/contents", {"Origin": f"{running_lab.url}"}, opener=browser)[0] == 200


def test_zh_tw_ui_and_recipe_extensions(running_lab):
    auth = {"Authorization": f"token {running_lab.token}"}
    status, _, body = _get(f"{running_lab.url}/lab/api/settings/@jupyterlab/translation-extension:plugin", auth)
    plugin = json.loads(body)
    # Our default (overrides.json), which a choice the user makes in the Language menu still replaces.
    assert status == 200 and plugin["schema"]["properties"]["locale"]["default"] == "zh_TW"
    assert plugin["settings"]["locale"] == "zh_TW"  # the user's own setting, written once (menus use it)
    status, _, body = _get(f"{running_lab.url}/lab/api/translations/zh_TW", auth)
    assert status == 200 and json.loads(body)["data"], body[:300]
    status, _, page = _get(f"{running_lab.url}/lab", auth)
    assert status == 200
    for extension in ("@jupyter-server/resource-usage", "@jupyter-widgets/jupyterlab-manager",
                      "@jupyterhub/jupyter-server-proxy"):
        assert extension in page, extension
    assert _get(f"{running_lab.url}/api/metrics/v1", auth)[0] == 200  # jupyter-resource-usage answers
    # The DeepSpeed panel's API is loaded, and closed without the token like everything else.
    assert _get(f"{running_lab.url}/dscluster/api/defaults", auth)[0] == 200
    assert _get(f"{running_lab.url}/dscluster/api/defaults")[0] in (401, 403)
    assert '"name": "dscluster"' in page  # the panel, among the federated lab extensions


def test_token_is_in_no_log_command_line_or_environment(running_lab):
    token = running_lab.token
    # Make sure a request carrying the token has been logged by now.
    _get(f"{running_lab.url}/api/contents?token={token}")
    assert token not in (running_lab.state_dir / "lab.log").read_text()
    assert token not in running_lab.start_out.stdout + running_lab.start_out.stderr
    cli_log = running_lab.home / ".dscluster" / "logs" / "dscluster.log"
    assert not cli_log.exists() or token not in cli_log.read_text()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        assert token.encode() not in cmdline, f"token on the command line of pid {proc.name}"
    environ = Path(f"/proc/{running_lab.pid}/environ").read_bytes()
    assert token.encode() not in environ and b"JUPYTER_TOKEN_FILE=" in environ


def test_second_start_and_busy_port_are_refused(running_lab):
    again = running_lab.cli("start", "--port", str(running_lab.port))
    assert again.returncode != 0 and "已在執行中" in again.stderr  # LANG=zh_TW: the CLI speaks zh-TW too


def test_stop_deletes_the_token(tmp_path):
    lab = Lab(tmp_path)
    assert lab.cli("start", "--port", str(lab.port)).returncode == 0
    pid = json.loads((lab.state_dir / "lab.json").read_text())["pid"]
    stopped = lab.cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not (lab.state_dir / "token").exists()
    assert lab.cli("url").returncode == 1


@pytest.mark.browser
def test_ui_is_in_traditional_chinese_in_a_real_browser(running_lab, tmp_path):
    """Headless Chromium (Debian's) loads the lab with the token: zh-TW UI, resource usage in the status bar.

    The zh-TW language pack does not translate everything (the menu bar stays English with it), so
    the check reads what it does translate: the Launcher tab and the file browser's column header.
    """
    sync_api = pytest.importorskip("playwright.sync_api")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    chromium = os.environ.get("DSCLUSTER_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                           "--disable-background-networking", "--no-first-run"])
        try:
            page = browser.new_page(locale="en-US")  # the browser's own language does not decide it
            page.set_default_timeout(60_000)
            page.goto(f"{running_lab.url}/lab?token={running_lab.token}")
            page.get_by_role("tab", name="啟動").first.wait_for()  # "Launcher"
            assert page.get_by_text("名稱", exact=True).first.is_visible()  # file browser: "Name"
            # jupyter-resource-usage's indicator in the status bar (its text spans several elements)
            page.wait_for_function("() => /Mem:\\s*[\\d.]+\\s*[KMG]B/.test(document.body.innerText)")
            page.screenshot(path=str(tmp_path / "lab-zh-tw.png"))
        finally:
            browser.close()

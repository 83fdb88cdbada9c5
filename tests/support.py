"""Helpers every test directory shares (tests/ is on sys.path: its conftest.py lives there).

One copy of each: import them (`from support import free_port, run_cli`), never paste them into a test file."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

# The dscluster command line as the tests run it: this interpreter's module, whatever PATH says.
CLI = (sys.executable, "-m", "dscluster.cli")
# As a user types it where the venv is on PATH: the venv's `dscluster` script.
VENV_CLI = (str(Path(sys.executable).parent / "dscluster"),)
# Debian's Chromium, never a downloaded browser; quiet and offline.
CHROMIUM = os.environ.get("DSCLUSTER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's pick; bind it soon, another process may take it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(*args: str, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
            timeout: float = 300, user: str | None = None, prefix: Sequence[str] = (),
            entry: Sequence[str] = CLI, stdin: int | None = None) -> subprocess.CompletedProcess:
    """`dscluster ARGS`, its output captured as text: the one way a test runs the command line.
    `env` None: this process's environment; `user`: run as that user (runuser); `prefix`: argv put
    before it (e.g. a namespace wrapper); `entry`: how it is started (`CLI`, or `VENV_CLI`, the script);
    `stdin`: e.g. subprocess.DEVNULL (a command that must not wait for an answer)."""
    argv = [*prefix, *entry, *args]
    if user:
        argv = ["runuser", "-u", user, "--", *argv]
    return subprocess.run(argv, env=None if env is None else dict(env), cwd=None if cwd is None else str(cwd),
                          capture_output=True, text=True, timeout=timeout, stdin=stdin)



@contextlib.contextmanager
def chromium():
    """Headless Chromium (Debian's) through playwright, closed when the block ends; skips the test where
    playwright is absent. Every browser fixture is `with chromium() as b: yield b`."""
    sync_api = pytest.importorskip("playwright.sync_api")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def show_panel(page, timeout_ms: int = 90_000):
    """Open the DeepSpeed panel in a JupyterLab page and return it once it lists a node. JupyterLab's layout
    restorer may reopen the panel (an earlier workspace) just after the tab appears, and a click on a tab
    that has meanwhile become current collapses the sidebar again: so look again after every click."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dscluster-panel"]')
    tab.wait_for(timeout=timeout_ms)
    node = page.locator("#dscluster-panel .dsc-node").first
    for _ in range(10):
        if "lm-mod-current" not in (tab.get_attribute("class") or ""):
            tab.click()
        try:
            node.wait_for(timeout=6_000)
            break
        except PlaywrightTimeout:
            continue
    node.wait_for(timeout=timeout_ms)
    return page.locator("#dscluster-panel")


def hub_log_in(browser, base: str, name: str, password: str):
    """A person's JupyterHub login in a fresh browser context (English UI): (context, page)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(base + "hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    return context, page


def shown_run_id(page, status: str, timeout_ms: int = 240_000) -> str:
    """The id of the run the panel's run view shows once it shows `status`; else what the page shows."""
    view = page.locator(".dsc-runview:visible")
    try:
        view.locator(f'.dsc-run-status .dsc-status[data-status="{status}"]').wait_for(timeout=timeout_ms)
    except Exception as err:  # noqa: BLE001 - say what the page shows instead
        shown = page.locator("#dscluster-panel .dsc-error, .dsc-runview .dsc-explanation, .dsc-runview .dsc-status")
        texts = [shown.nth(i).inner_text() for i in range(shown.count())]
        raise AssertionError(f"no {status} run shown; the page shows {texts}") from err
    return view.locator("h2").inner_text().strip()


def answers_ok(url: str, timeout: float = 3) -> bool:
    """Whether `url` answers 200 now."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False

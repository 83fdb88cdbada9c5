from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter"))

from labserver import REPO, start_lab  # noqa: E402

SHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("DSCLUSTER_CHROMIUM", "/usr/bin/chromium")
# Debian's Chromium, never a downloaded browser; quiet and offline.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    server = start_lab(tmp_path_factory.mktemp("browserlab"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


@pytest.fixture
def shot(request):
    """shot(page, "step-name") saves test-artifacts/screenshots/<test>--<step>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def take(pg, step: str) -> Path:
        path = SHOTS / f"{request.node.name}--{step}.png"
        pg.screenshot(path=str(path), full_page=False)
        return path

    return take

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter"))

from labserver import REPO, start_lab  # noqa: E402
from support import chromium  # noqa: E402

SHOTS = REPO / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    server = start_lab(tmp_path_factory.mktemp("browserlab"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


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

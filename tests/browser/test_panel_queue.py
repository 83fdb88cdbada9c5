"""The panel with several users' runs: each run shows its owner and the GPUs it holds, the GPU queue lists
who holds what and who waits, and a run this lab's user does not own has no stop (or restart) button.

The lab runs as root here, an admin who may stop every run; the viewer who is not is simulated by one
change to the real server's answer (`mine: false` for another user's run), as a non-root lab gets it
(tests/jupyter and tests/cluster/test_gpu_leases_sim.py check the server's side of that rule).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from dscluster.fsutil import atomic_write_json
from dscluster.runs.leases import files as leasefiles
from dscluster.runs.leases.rules import HELD, WAITING, Claim, Gpu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANN = "ann-run-20260101-120000-aa11"
BOB = "bob-run-20260101-130000-bb22"


def _run(lab, run_id: str, owner: str, status: str) -> None:
    run = lab.shared / "runs" / run_id
    (run / "logs").mkdir(parents=True)
    atomic_write_json(run / "run.json", {
        "id": run_id, "name": run_id.split("-")[0], "status": status, "created": "2026-01-01T12:00:00+00:00",
        "world_size": 2, "cluster": "local", "attempts": [], "owner": owner,
        "launch": {"program": "train.py", "cwd": str(lab.shared), "hosts": [["node0", 2]], "launcher": "pdsh"}})


@pytest.fixture
def team(lab):
    _run(lab, ANN, "ann", "running")
    _run(lab, BOB, "bob", "queued")
    now = time.time()
    me = leasefiles.this_holder()  # this test process stands in for both supervisors: alive
    with leasefiles.LeaseBoard(leasefiles.cluster_dir(lab.shared)) as board:
        board.write(Claim(ANN, "ann", (Gpu("node0", 0), Gpu("node0", 1)), me, state=HELD, queued=now - 60,
                          since=now - 60, heartbeat=now))
        board.write(Claim(BOB, "bob", (Gpu("node0", 0), Gpu("node0", 1)), me, state=WAITING, queued=now - 5,
                          heartbeat=now))
    yield
    with leasefiles.LeaseBoard(leasefiles.cluster_dir(lab.shared)) as board:
        board.remove(ANN)
        board.remove(BOB)


def test_owner_gpus_queue_and_no_stop_for_another_users_run(page, lab, team, shot):
    from test_panel import open_panel

    def not_mine(route):  # the viewer is bob, not root: ann's run is not theirs to stop
        res = route.fetch()
        body = res.json()
        for r in body["runs"]:
            r["mine"] = r["owner"] == "bob"
        route.fulfill(response=res, body=json.dumps(body))

    def view_not_mine(route):
        res = route.fetch()
        body = res.json()
        body["summary"]["mine"] = body["summary"].get("owner") == "bob"
        route.fulfill(response=res, body=json.dumps(body))

    # JupyterLab adds a cache-busting query to every GET
    listing, one_run = re.compile(r".*/dscluster/api/runs(\?[^/]*)?$"), re.compile(r".*/dscluster/api/runs/[^/?]+(\?.*)?$")
    page.route(listing, not_mine)
    page.route(one_run, view_not_mine)
    try:
        panel = open_panel(page, lab)
        ann = panel.locator(f'.dsc-run-row[data-run-id="{ANN}"]')
        bob = panel.locator(f'.dsc-run-row[data-run-id="{BOB}"]')
        ann.wait_for()
        assert ann.locator(".dsc-owner").inner_text() == "ann"
        assert ann.locator(".dsc-gpus").inner_text() == "node0:0 node0:1"
        assert bob.locator(".dsc-owner").inner_text() == "bob"
        assert bob.locator('.dsc-status[data-status="queued"]').count() == 1
        assert ann.locator("button.dsc-stop").count() == 0  # ann's run: no stop button for bob
        assert bob.locator("button.dsc-stop").count() == 1  # bob's own queued run can leave the queue
        queue = panel.locator(".dsc-queue")
        queue.locator(f'.dsc-claim.dsc-held[data-run-id="{ANN}"]').wait_for()
        waiting = queue.locator(f'.dsc-claim.dsc-waiting[data-run-id="{BOB}"]').inner_text()
        assert waiting.startswith("1. ") and "(bob)" in waiting and ANN in waiting, waiting
        shot(page, "queue")
        ann.click()  # the run view: the owner named, neither stop nor restart offered
        view = page.locator(".dsc-runview")
        view.get_by_text("owner: ann").wait_for()
        assert view.locator("button.dsc-stop").is_hidden() and view.locator("button.dsc-restart").is_hidden()
    finally:
        page.unroute(listing)
        page.unroute(one_run)


def test_taken_gpus_tell_the_panel_user_to_tick_the_wait_box(page, lab, shot):
    """The 409 for taken GPUs carries the command line's fix (add --wait); the panel says what to do in the
    panel instead: tick its "Wait in the queue" box. The answer is the server's own error for such a launch."""
    from test_panel import fill_form, open_panel

    from dscluster.runs.leases import leasing

    held = Claim(ANN, "ann", (Gpu("node0", 0), Gpu("node0", 1)), leasefiles.this_holder(), state=HELD,
                 since=time.time() - 60)
    body = leasing.busy_error(None, (held,), held.gpus).to_dict()
    assert body["setting"] == "--wait" and "--wait" in body["hint"]

    def busy(route):
        if route.request.method == "POST":
            route.fulfill(status=409, content_type="application/json", body=json.dumps(body))
        else:
            route.fallback()

    listing = re.compile(r".*/dscluster/api/runs(\?[^/]*)?$")
    page.route(listing, busy)
    try:
        panel = open_panel(page, lab)
        fill_form(page, "--preset tiny --steps 1")
        panel.locator("button.dsc-launch").click()
        error = panel.locator(".dsc-form-error")
        error.wait_for()
        text = error.inner_text()
        assert body["message"] in text and "Wait in the queue when the GPUs are taken" in text, text
        assert "--wait" not in text, text
        shot(page, "gpus-taken")
    finally:
        page.unroute(listing, busy)
        panel.locator("form.dsc-launch-form button", has_text="Cancel").click()

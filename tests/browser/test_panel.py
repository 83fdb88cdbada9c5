"""The DeepSpeed panel in a real JupyterLab, driven in headless Chromium: it opens, lists the
cluster's nodes, launches the demo from the form (through the supervisor) and shows it succeed with
a loss curve, refuses an invalid config with its message, stops a long run, speaks zh-TW, and the
server refuses requests without the token. Screenshots: test-artifacts/screenshots/."""

from __future__ import annotations

import json
import socket

import pytest
from support import show_panel

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FAST_ARGS = "--preset tiny --steps 8 --log-interval 1 --save-interval 4 --sample-tokens 8 --eval-batches 1"
LONG_ARGS = "--preset tiny --steps 100000 --log-interval 1 --step-sleep 0.3 --sample-tokens 0 --eval-interval 0"
RUN_TIMEOUT_MS = 240_000
# The run view on the active main-area tab (hidden tabs stay in the DOM).
VIEW_JS = "[...document.querySelectorAll('.dsc-runview')].find(e => e.checkVisibility())"


def open_panel(page, lab):
    page.goto(f"{lab.url}/lab?token={lab.token}")
    return show_panel(page)


def fill_form(page, args: str, config: dict | None = None):
    panel = page.locator("#dscluster-panel")
    if panel.locator("form.dsc-launch-form").is_hidden():
        panel.locator("button.dsc-new-run").click()
    script = panel.locator('form.dsc-launch-form input[name="script"]')
    page.wait_for_function("() => document.querySelector('form.dsc-launch-form input[name=script]').value !== ''")
    assert script.input_value() == "-m dscluster.train"
    panel.locator('input[name="args"]').fill(args)
    if config is not None:
        panel.locator('textarea[name="config"]').fill(json.dumps(config))
    panel.locator('input[name="max_restarts"]').fill("0")


def active_run_view(page):
    view = page.locator(".dsc-runview:visible")
    view.wait_for()
    return view


def test_request_without_token_is_refused(page, lab, shot):
    res = page.goto(f"{lab.url}/dscluster/api/runs")
    assert res.status == 403
    assert json.loads(page.locator("body").inner_text())["status"] == 403
    page.goto(f"{lab.url}/lab")  # no token: JupyterLab's login page, not the workbench
    page.locator("input[type=password]").first.wait_for()
    assert page.locator(".jp-LabShell").count() == 0
    shot(page, "login-required")


def test_panel_opens_and_lists_the_local_node(page, lab, shot):
    panel = open_panel(page, lab)
    node = panel.locator(f'.dsc-node[data-node="{socket.gethostname()}"]')
    node.wait_for()
    assert panel.locator("h3").first.inner_text().startswith("Cluster")
    # CPU machine: the node shows CPU and memory bars (GPU machines show one row per GPU).
    assert node.locator(".dsc-gpu").count() >= 1
    # TensorBoard on the runs directory is one click away in the launcher (jupyter-server-proxy).
    page.locator('.jp-LauncherCard:has-text("TensorBoard (runs)")').wait_for()
    shot(page, "panel")


def test_invalid_config_shows_the_validation_message(page, lab, shot):
    fill_form(page, "--steps 2", {"train_batch_size": 7, "train_micro_batch_size_per_gpu": 4,
                                  "gradient_accumulation_steps": 1})
    page.locator("#dscluster-panel button.dsc-launch").click()
    error = page.locator("#dscluster-panel .dsc-form-error")
    error.wait_for(state="visible")
    assert "train_batch_size" in error.inner_text()
    shot(page, "invalid-config")


def test_launch_demo_from_the_form_succeeds_with_a_loss_curve(page, lab, shot):
    fill_form(page, FAST_ARGS, {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1})
    shot(page, "form")
    page.locator("#dscluster-panel button.dsc-launch").click()
    view = active_run_view(page)
    view.locator('.dsc-run-status .dsc-status[data-status="succeeded"]').wait_for(timeout=RUN_TIMEOUT_MS)
    loss = view.locator('.dsc-chart[data-kind="loss"]')
    page.wait_for_function(
        f"() => Number({VIEW_JS}?.querySelector('.dsc-chart[data-kind=loss]')?.dataset.points || 0) >= 8",
        timeout=30_000)
    assert int(loss.get_attribute("data-points")) >= 8
    assert loss.locator("canvas").count() == 1  # drawn by uPlot
    assert view.locator(".dsc-log-tabs .dsc-tab").count() >= 2  # launcher + rank logs
    view.locator('.dsc-events li[data-event="finished"]').wait_for()
    view.locator(".dsc-ckpts tr[data-step]").first.wait_for()
    shot(page, "succeeded")
    row = page.locator("#dscluster-panel .dsc-run-row").first
    row.locator('.dsc-status[data-status="succeeded"]').wait_for()

    # Restart: a new run from the same form values that resumes from this run's last checkpoint.
    first_id = view.locator("h2").inner_text().strip()
    view.locator("button.dsc-restart").click()
    page.wait_for_function(
        f"(old) => {{ const h = {VIEW_JS}?.querySelector('h2'); return h && h.innerText.trim() !== old; }}",
        arg=first_id)
    again = active_run_view(page)
    again.locator('.dsc-run-status .dsc-status[data-status="succeeded"]').wait_for(timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(
        f"() => ({VIEW_JS}?.querySelector('.dsc-log')?.textContent || '').includes('resumed from step-8')",
        timeout=30_000)
    shot(page, "restarted")


def test_stop_works_on_a_long_run(page, lab, shot):
    fill_form(page, LONG_ARGS, {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1})
    page.locator("#dscluster-panel button.dsc-launch").click()
    view = active_run_view(page)
    view.locator('.dsc-run-status .dsc-status[data-status="running"]').wait_for(timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(
        f"() => Number({VIEW_JS}?.querySelector('.dsc-chart[data-kind=loss]')?.dataset.points || 0) >= 2",
        timeout=RUN_TIMEOUT_MS)
    shot(page, "running")
    view.locator("button.dsc-stop").click()
    view.locator('.dsc-run-status .dsc-status[data-status="stopped"]').wait_for(timeout=90_000)
    run_id = view.locator("h2").inner_text().strip()
    record = lab.api("GET", f"runs/{run_id}").json()["run"]
    assert record["status"] == "stopped"
    shot(page, "stopped")


def test_failed_and_half_written_runs_render(page, lab, shot):
    from dscluster.fsutil import append_jsonl, atomic_write_json

    runs = lab.shared / "runs"
    failed = runs / "broken-20260101-000000-dead"
    (failed / "logs").mkdir(parents=True)
    atomic_write_json(failed / "run.json", {
        "id": failed.name, "name": "broken", "status": "failed", "created": "2026-01-01T00:00:00+00:00",
        "attempts": [{"n": 1, "exit_code": 1}], "exit_code": 1, "world_size": 2,
        "explanation": {"signature": "oom", "cause": "rank 1 ran out of memory", "fix": "lower the micro batch",
                        "error": {"summary": "RuntimeError: out of memory (/work/train.py:41)", "rank": 1,
                                  "node": "node2", "who": "rank 1 on node2"},
                        "no_restart": {"why": "same-failure", "previous": 1}}})
    (failed / "logs" / "x_rank1.log").write_text("Traceback (most recent call last):\nRuntimeError: out of memory\n")
    half = runs / "half-20260101-000000-beef"  # a run the supervisor is still creating
    half.mkdir()
    append_jsonl(half / "metrics.jsonl", {"step": 1, "loss": 2.0})
    with open(half / "metrics.jsonl", "a") as f:
        f.write('{"step": 2, "lo')
    panel = open_panel(page, lab)
    panel.locator(f'.dsc-run-row[data-run-id="{half.name}"] .dsc-status[data-status="pending"]').wait_for()
    panel.locator(f'.dsc-run-row[data-run-id="{failed.name}"]').click()
    view = active_run_view(page)
    view.locator('.dsc-run-status .dsc-status[data-status="failed"]').wait_for()
    assert "out of memory" in view.locator(".dsc-explanation").inner_text()
    # The failing rank's own words first, then why no restart was tried.
    assert view.locator(".dsc-first-error").inner_text() == "rank 1 on node2: RuntimeError: out of memory (/work/train.py:41)"
    assert "failed the same way as attempt 1" in view.locator(".dsc-no-restart").inner_text()
    page.wait_for_function(f"() => ({VIEW_JS}?.querySelector('.dsc-log')?.textContent || '').includes('RuntimeError')")
    assert view.locator("button.dsc-stop").is_hidden() and view.locator("button.dsc-restart").is_visible()
    shot(page, "failed-run")
    panel.locator(f'.dsc-run-row[data-run-id="{half.name}"]').click()
    page.wait_for_function(
        f"() => {VIEW_JS}?.querySelector('h2')?.innerText.trim() === '{half.name}' && "
        f"Number({VIEW_JS}.querySelector('.dsc-chart[data-kind=loss]').dataset.points) === 1")
    assert page.locator(".dsc-runview:visible .dsc-error:visible").count() == 0
    shot(page, "half-written-run")


def test_zh_tw_locale_shows_translated_panel_strings(page, lab, shot):
    from dscluster import explain
    from dscluster.fsutil import atomic_write_json

    down = lab.shared / "runs" / "down-20260101-000000-f00d"
    down.mkdir(parents=True)
    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", retry=False,
                         nodes="node9", limit="60", heal="dscluster sim heal node9")
    atomic_write_json(down / "run.json", {"id": down.name, "name": "down", "status": "failed",
                                          "created": "2026-01-01T00:00:00+00:00", "explanation": exp.to_dict()})
    plugin = "@jupyterlab/translation-extension:plugin"
    res = lab.request("PUT", f"/lab/api/settings/{plugin}", {"raw": json.dumps({"locale": "zh_TW"})})
    assert res.status == 204, res.body
    try:
        panel = open_panel(page, lab)
        heading = panel.locator("h3").first
        page.wait_for_function("() => document.querySelector('#dscluster-panel h3').innerText.startsWith('叢集')")
        assert heading.inner_text().startswith("叢集")
        assert "新的訓練" in panel.locator("button.dsc-new-run").inner_text()
        statuses = set(panel.locator(".dsc-run-row .dsc-status").all_inner_texts())
        assert statuses and statuses <= {"等待中", "執行中", "重新啟動中", "成功", "失敗", "已停止"}, statuses
        shot(page, "zh-TW")
        # The panel names its language to the server, which explains the failure in it.
        panel.locator(f'.dsc-run-row[data-run-id="{down.name}"]').click()
        page.wait_for_function(f"() => ({VIEW_JS}?.querySelector('.dsc-explanation')?.textContent || '')"
                               ".includes('node9 在失敗後 60 秒內沒有恢復')")
        shot(page, "zh-TW-explanation")
    finally:
        lab.request("PUT", f"/lab/api/settings/{plugin}", {"raw": json.dumps({"locale": "en"})})

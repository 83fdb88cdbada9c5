"""What a user reads off the DeepSpeed panel in headless Chromium: hovering a chart shows the step and the
value under the cursor, a constant series (a fixed learning rate) gets an axis around its value, a long run
id keeps its end visible with the whole id on hover, and the log tabs come launcher, ranks by number, then
supervisor and watchdog, whatever order the nodes' launch times give their files."""

from __future__ import annotations

import json

import pytest
from support import show_panel

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LR = 3e-4
STEPS = 40


def loss_at(step: int) -> float:
    return round(6.0 - 0.1 * step, 4)


def make_run(shared, run_id: str, logs: dict[str, str] | None = None, metrics: bool = True):
    from dscluster.fsutil import atomic_write_json

    run = shared / "runs" / run_id
    (run / "logs").mkdir(parents=True)
    atomic_write_json(run / "run.json", {"id": run_id, "name": run_id.rsplit("-", 3)[0], "status": "succeeded",
                                         "created": "2026-01-01T00:00:00+00:00", "exit_code": 0,
                                         "attempts": [{"n": 1, "exit_code": 0}], "world_size": 2})
    for name, text in (logs or {}).items():
        (run / "logs" / name).write_text(text)
    if metrics:
        lines = [{"step": s, "loss": loss_at(s), "lr": LR, "tokens_per_s": 1000.0 + s} for s in range(1, STEPS + 1)]
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return run


def open_run(page, lab, run_id: str):
    page.goto(f"{lab.url}/lab?token={lab.token}")
    panel = show_panel(page)
    row = panel.locator(f'.dsc-run-row[data-run-id="{run_id}"]')
    row.click()
    page.wait_for_function(
        "id => [...document.querySelectorAll('.dsc-runview')].some(v => v.checkVisibility() && "
        "v.querySelector('h2')?.innerText.trim() === id)", arg=run_id)
    return panel, page.locator(".dsc-runview:visible")


def chart(view, kind: str):
    node = view.locator(f'.dsc-chart[data-kind="{kind}"]')
    node.locator(".u-over").wait_for()  # uPlot's plotting area, where the cursor is tracked
    return node


def hover(page, node, fraction: float) -> tuple[int, float]:
    box = node.locator(".u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2)
    readout = node.locator(".dsc-chart-readout")
    page.wait_for_function("el => el.dataset.hover === 'yes'", arg=readout.element_handle())
    words = readout.inner_text().split()  # "step 20 · 4.0"
    assert words[0] == "step" and words[2] == "·", words
    return int(words[1].replace(",", "")), float(words[3].replace(",", ""))


def test_hovering_a_chart_shows_step_and_value(page, lab, shot):
    run = make_run(lab.shared, "hover-20260101-000000-a1b2")
    _, view = open_run(page, lab, run.name)
    loss = chart(view, "loss")
    page.wait_for_function("el => el.dataset.points === '40'", arg=loss.element_handle())
    # Not hovering: the newest point.
    assert loss.locator(".dsc-chart-readout").inner_text() == f"step {STEPS} · {loss_at(STEPS):g}"
    left_step, left_value = hover(page, loss, 0.25)
    right_step, right_value = hover(page, loss, 0.75)
    assert 1 <= left_step < right_step <= STEPS
    assert left_value == pytest.approx(loss_at(left_step)) and right_value == pytest.approx(loss_at(right_step))
    shot(page, "hover")
    speed_step, speed = hover(page, chart(view, "throughput"), 0.5)
    assert speed == pytest.approx(1000.0 + speed_step, abs=1)


def test_a_constant_learning_rate_gets_an_axis_around_its_value(page, lab, shot):
    run = make_run(lab.shared, "constlr-20260101-000000-c3d4")
    _, view = open_run(page, lab, run.name)
    lr = chart(view, "lr")
    page.wait_for_function("el => el.dataset.yMin !== undefined", arg=lr.element_handle())
    low, high = float(lr.get_attribute("data-y-min")), float(lr.get_attribute("data-y-max"))
    # Not -0.498..0.502: the value in the middle, the axis no wider than the value itself.
    assert 0 < low < LR < high and high - low <= LR, (low, high)
    assert abs((low + high) / 2 - LR) < LR * 0.01
    step, value = hover(page, lr, 0.5)
    assert 1 <= step <= STEPS and value == pytest.approx(LR)
    shot(page, "constant-lr")


def test_a_long_run_id_keeps_its_end_and_shows_in_full_on_hover(page, lab, shot):
    run_id = "sweep-gpt-medium-lr3e-4-warmup2000-batch512-seq2048-zero3-offload-20260101-000000-beef"
    make_run(lab.shared, run_id, metrics=False)
    page.goto(f"{lab.url}/lab?token={lab.token}")
    panel = show_panel(page)
    label = panel.locator(f'.dsc-run-row[data-run-id="{run_id}"] .dsc-run-id')
    label.wait_for()
    assert label.get_attribute("title") == run_id
    assert label.text_content() == run_id
    row_box = panel.locator(f'.dsc-run-row[data-run-id="{run_id}"]').bounding_box()
    tail = label.locator(".dsc-run-id-tail")
    tail_box = tail.bounding_box()
    # The end that tells runs of one name apart is on screen; the middle gave way to the ellipsis.
    assert tail.inner_text() == "-000000-beef"
    assert row_box["x"] <= tail_box["x"] and tail_box["x"] + tail_box["width"] <= row_box["x"] + row_box["width"] + 1
    head = label.locator(".dsc-run-id-head")
    assert head.evaluate("el => el.scrollWidth > el.clientWidth"), "the sidebar is wide enough: no ellipsis tested"
    assert head.evaluate("el => getComputedStyle(el).textOverflow") == "ellipsis"
    shot(page, "long-run-id")
    # Its main-area tab cuts the label short too: the whole id is the tab's title.
    label.click()
    page.locator(f'.lm-DockPanel-tabBar .lm-TabBar-tab[title="{run_id}"]').wait_for()


def test_log_tabs_come_in_a_fixed_order(page, lab, shot):
    # DeepSpeed's per-rank logs are <launch time>_rank<N>.log, the time each node's own: node1 started a
    # second before node0 here, and rank 10 sorts before rank 2 as text.
    logs = {f"20260101000002_rank{r}.log": f"rank {r} on node0\n" for r in (0, 1)}
    logs |= {f"20260101000001_rank{r}.log": f"rank {r} on node1\n" for r in (2, 10)}
    logs |= {"watchdog.log": "w\n", "supervisor.log": "s\n", "launcher.log": "l\n"}
    run = make_run(lab.shared, "tabs-20260101-000000-e5f6", logs=logs, metrics=False)
    _, view = open_run(page, lab, run.name)
    tabs = view.locator(".dsc-log-tabs .dsc-tab")
    page.wait_for_function("el => el.querySelectorAll('.dsc-tab').length === 7",
                           arg=view.locator(".dsc-log-tabs").element_handle())
    assert tabs.all_inner_texts() == ["launcher", "rank 0", "rank 1", "rank 2", "rank 10", "supervisor", "watchdog"]
    assert tabs.nth(1).get_attribute("title") == "20260101000002_rank0.log"
    page.wait_for_function("el => el.textContent.includes('rank 0 on node0')", arg=view.locator(".dsc-log").element_handle())
    shot(page, "log-tabs")

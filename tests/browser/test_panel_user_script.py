"""A user's own DeepSpeed script, launched with `dscluster launch`, charted in the panel in headless
Chromium: its loss from its one `dscluster.log` line, and the learning rate and step time from
DeepSpeed's own monitor (which launch adds to the run's ds_config; the script has no line for them);
the same values in the run's TensorBoard behind Jupyter. Real launcher, supervisor, gloo on CPU."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support import run_cli
from test_panel import VIEW_JS, open_panel

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SCRIPT = Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py"
STEPS = 8
# WarmupLR: a learning rate that rises step by step, so its chart has a shape to check.
DS_CONFIG = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
             "optimizer": {"type": "SGD", "params": {"lr": 0.05}},
             "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 0.05,
                                                          "warmup_num_steps": 4, "warmup_type": "linear"}},
             "zero_optimization": {"stage": 0}, "wall_clock_breakdown": True}


@pytest.fixture(scope="module")
def user_run(lab, tmp_path_factory):
    """The run, finished: `dscluster launch --local 1 --detach min_ds_script.py --log-loss --deepspeed ...`."""
    work = tmp_path_factory.mktemp("userwork")
    (work / "ds_config.json").write_text(json.dumps(DS_CONFIG))
    res = run_cli("launch", "--local", "1", "--detach", "--name", "mine", str(SCRIPT), "--steps", str(STEPS),
                  "--log-loss", "--deepspeed", "--deepspeed_config", "ds_config.json", env=lab.env, cwd=work,
                  timeout=120)
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    run_dir = lab.shared / "runs" / run_id
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        status = json.loads((run_dir / "run.json").read_text()).get("status")
        if status in ("succeeded", "failed", "stopped"):
            break
        time.sleep(1)
    assert status == "succeeded", (run_dir / "logs" / "launcher.log").read_text()[-3000:]
    return run_id


def test_the_panel_charts_a_user_scripts_loss_and_deepspeeds_learning_rate(page, lab, user_run, shot):
    panel = open_panel(page, lab)
    panel.locator(f'.dsc-run-row[data-run-id="{user_run}"]').click()
    view = page.locator(".dsc-runview:visible")
    view.locator('.dsc-run-status .dsc-status[data-status="succeeded"]').wait_for()
    for kind in ("loss", "lr", "elapsed_time_ms_step"):
        page.wait_for_function(
            f"() => Number({VIEW_JS}?.querySelector('.dsc-chart[data-kind={kind}]')?.dataset.points || 0) >= {STEPS}",
            timeout=30_000)
    lr = view.locator('.dsc-chart[data-kind="lr"]')
    assert lr.locator(".dsc-chart-title").inner_text() == "Learning rate"
    assert lr.locator("canvas").count() == 1 and int(lr.get_attribute("data-points")) == STEPS
    assert view.locator('.dsc-chart[data-kind="step"], .dsc-chart[data-kind="samples"]').count() == 0
    assert view.locator('.dsc-chart[data-kind="throughput"] .dsc-chart-empty').count() == 1  # not logged: empty
    view.locator('.dsc-chart[data-kind="lr"]').scroll_into_view_if_needed()
    shot(page, "user-script-charts")


def test_the_runs_tensorboard_shows_the_scripts_values_too(lab, user_run):
    pytest.importorskip("jupyter_server_proxy")
    pytest.importorskip("tensorboard")
    deadline = time.monotonic() + 120
    tags: dict = {}
    while time.monotonic() < deadline:  # the first request starts TensorBoard
        res = lab.request("GET", "/tensorboard/data/plugin/scalars/tags", timeout=90)
        if res.status == 200:
            tags = json.loads(res.body)
            if f"{user_run}/tensorboard/deepspeed" in tags:
                break
        time.sleep(2)
    assert "train/lr" in tags.get(f"{user_run}/tensorboard/deepspeed", {}), tags  # DeepSpeed's monitor
    assert "train/loss" in tags.get(f"{user_run}/tensorboard", {}), tags  # the script's dscluster.log
    res = lab.request("GET", f"/tensorboard/data/plugin/scalars/scalars?run={user_run}/tensorboard/deepspeed"
                             "&tag=train/lr", timeout=30)
    values = [v for _, _, v in json.loads(res.body)]
    assert len(values) == STEPS and values[0] < values[-1] == pytest.approx(0.05), values

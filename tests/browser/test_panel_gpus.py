"""The panel's GPU view with real NVML data: two nodes whose agents published samples recorded on an H200
while the reference trainer ran (tests/data/nvml_h200_training*.jsonl, the node sampler's own output,
`python -m dscluster.node.stats --record`). Each GPU of each node shows four time series (utilisation,
memory, power, temperature) drawn from the node's history file, and its latest readings."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from labserver import start_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIXTURES = {"h200-0": "nvml_h200_training.jsonl", "h200-1": "nvml_h200_training_2.jsonl"}
DATA = Path(__file__).resolve().parents[1] / "data"


def recorded(name: str) -> list[dict]:
    """A recording with its clock moved so that its last sample is now (as a node still training)."""
    rows = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
    shift = time.time() - 1.0 - rows[-1]["time"]
    return [dict(r, time=r["time"] + shift) for r in rows]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    from dscluster.node import stats

    base = tmp_path_factory.mktemp("gpulab")
    hostfile = base / "hostfile"
    hostfile.write_text("".join(f"{node} slots=1\n" for node in FIXTURES))
    shared = base / "shared"
    samples = {}
    for node, name in FIXTURES.items():
        samples[node] = recorded(name)
        history = stats.history_path(shared, node)
        history.parent.mkdir(parents=True, exist_ok=True)
        history.write_text("".join(json.dumps(s) + "\n" for s in samples[node]))
    stop = threading.Event()

    def agents():  # what each node's agent does: its latest sample, every 2 s
        while not stop.is_set():
            for node, rows in samples.items():
                stats.publish(shared, node, dict(rows[-1], time=time.time()))
            stop.wait(2)

    thread = threading.Thread(target=agents, daemon=True)
    thread.start()
    server = start_lab(base, extra_env={"DSCLUSTER_CLUSTER": str(hostfile)})
    yield server
    stop.set()
    thread.join(5)
    server.stop()


def test_each_gpu_of_each_node_shows_its_recorded_history(page, lab, shot):
    from test_panel import open_panel

    panel = open_panel(page, lab)
    for node, name in FIXTURES.items():
        card = panel.locator(f'.dsc-node[data-node="{node}"]')
        card.locator(".dsc-gpu-history-row").first.wait_for()
        assert card.locator(".dsc-gpu-history-row").count() == 1  # one H200 per node
        for metric in ("util", "mem", "power", "temp"):
            spark = card.locator(f'.dsc-spark-cell[data-metric="{metric}"] .dsc-spark')
            assert int(spark.get_attribute("data-points")) >= 100, (node, metric)
            spark.locator(".u-over").wait_for()  # drawn (uPlot's plotting area)
        last = recorded(name)[-1]["gpus"][0]
        labels = card.locator(".dsc-spark-label").all_inner_texts()
        assert f"{last['power_w']:.0f} W" in labels[2] and f"{last['temp_c']:.0f} °C" in labels[3], labels
        assert "util" in labels[0] and "GiB" in labels[1]
    # Hovering a chart shows the sample under the cursor and its time; the recording ran the GPU flat out,
    # drawn on a 0-100 % axis, and the hover survives the section's redraw every 3 s.
    util = panel.locator('.dsc-node[data-node="h200-0"] .dsc-spark-cell[data-metric="util"]')
    assert util.locator(".dsc-spark").get_attribute("data-max") == "100"
    label = util.locator(".dsc-spark-label")
    box = util.locator(".u-over").bounding_box()
    seen = []
    for i in range(1, 60):
        page.mouse.move(box["x"] + box["width"] * i / 60, box["y"] + box["height"] / 2)
        page.wait_for_function("el => el.dataset.hover === 'yes'", arg=label.element_handle())
        words = label.inner_text().split()  # "util 100% · 07:01:02"
        assert words[0] == "util" and words[2] == "·", words
        seen.append(int(words[1].rstrip("%")))
    assert max(seen) >= 90 and min(seen) < 50, seen
    drawn = panel.locator('.dsc-node[data-node="h200-0"] .dsc-gpu-history').element_handle()
    page.wait_for_function("el => !el.isConnected", arg=drawn, timeout=30_000)  # the cards were redrawn
    assert label.get_attribute("data-hover") == "yes" and "·" in label.inner_text()
    path = shot(page, "gpu-history")
    panel.screenshot(path=str(path.with_name(path.stem + "-panel.png")))  # the README's picture

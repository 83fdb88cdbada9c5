"""The notebook API end to end: a notebook executed by nbclient in a real kernel launches the demo
through the supervisor, watches it with the live widget, reads metrics as a DataFrame and logs,
and stops a long run."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

CONFIG = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}
CELLS = [
    "import dscluster\ncluster = dscluster.Cluster()\ncluster",
    "run = dscluster.launch('-m dscluster.train', '--preset tiny --steps 6 --log-interval 1 --save-interval 3 "
    f"--sample-tokens 8 --eval-batches 1', max_restarts=0, config={CONFIG!r}, nprocs=1)\n"
    "watcher = run.watch(interval=0.5)\nwatcher",
    "status = run.wait(timeout=400)\nassert status == 'succeeded', (status, run.logs(name='launcher.log'))",
    "df = run.metrics()\nassert len(df[df['loss'].notna()]) >= 6, df\nassert df['loss'].iloc[-1] < df['loss'].iloc[0]\n"
    "df.tail(3)",
    "watcher.join(15)\nassert watcher.progress.value == watcher.progress.max == 6, watcher.progress\n"
    "assert 'data-points=\"6\"' in watcher.chart.value\nprint(run.logs(rank=0, tail=5))",
    "run",
    "import time\nlong = dscluster.launch('-m dscluster.train', ['--preset', 'tiny', '--steps', '100000', "
    "'--log-interval', '1', '--step-sleep', '0.3', '--sample-tokens', '0', '--eval-interval', '0'], "
    f"config={CONFIG!r}, nprocs=1)\n"
    "deadline = time.time() + 400\n"
    "while len(long.metric_records()) < 2 and time.time() < deadline and not long.done:\n    time.sleep(1)\n"
    "assert long.status == 'running', long.status\n"
    "assert long.stop(timeout=120) == 'stopped', long.status",
]


def test_notebook_launches_watches_and_stops(dscluster_home, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    nbformat.write(nb, str(tmp_path / "executed.ipynb"))
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("dscluster-cluster" in h for h in html)  # Cluster._repr_html_
    assert any("dscluster-run" in h and 'data-points="6"' in h for h in html)  # Run._repr_html_
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, json.dumps(outputs)[:2000]
    runs = sorted((tmp_path / "shared" / "runs").iterdir())
    statuses = sorted(json.loads((r / "run.json").read_text())["status"] for r in runs)
    assert statuses == ["stopped", "succeeded"]

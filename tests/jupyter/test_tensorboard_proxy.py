"""TensorBoard on the runs directory behind jupyter-server-proxy: listed for the launcher, started on
first use bound to localhost, served only to authenticated requests."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow


def test_tensorboard_is_proxied_behind_jupyter_auth(lab):
    pytest.importorskip("jupyter_server_proxy")
    pytest.importorskip("tensorboard")
    info = lab.request("GET", "/server-proxy/servers-info").json()
    entry = next(s for s in info["server_processes"] if s["name"] == "tensorboard")
    assert entry["launcher_entry"]["enabled"] and entry["launcher_entry"]["title"] == "TensorBoard (runs)"
    anon = lab.request("GET", "/tensorboard/", token=False)  # redirected to Jupyter's login page
    assert b"tf-tensorboard" not in anon.body and b"TensorBoard" not in anon.body
    assert anon.status in (302, 403) or b"password" in anon.body.lower()
    deadline = time.monotonic() + 120
    res = lab.request("GET", "/tensorboard/", timeout=90)
    while res.status != 200 and time.monotonic() < deadline:  # first request starts TensorBoard
        time.sleep(1)
        res = lab.request("GET", "/tensorboard/", timeout=90)
    assert res.status == 200, res.body[:500]
    assert b"TensorBoard" in res.body or b"tf-tensorboard" in res.body
    runs = lab.request("GET", "/tensorboard/data/environment", timeout=30)
    assert runs.status == 200 and str(lab.shared / "runs") in runs.body.decode()

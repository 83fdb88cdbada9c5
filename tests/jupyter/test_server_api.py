"""The /dscluster/api/ endpoints against a real Jupyter server (token auth, XSRF), on run
directories written the way the supervisor and trainer write them, including half-written ones."""

from __future__ import annotations

import json
import os

import pytest

from dscluster.fsutil import append_jsonl, atomic_write_json

RUN_ID = "demo-20260101-120000-ab12"
PENDING_ID = "demo-20260101-130000-cd34"


@pytest.fixture(scope="module")
def runs(lab):
    """One finished run (complete files plus a torn metrics line) and one with nothing but a directory."""
    run = lab.shared / "runs" / RUN_ID
    (run / "logs").mkdir(parents=True)
    atomic_write_json(run / "run.json", {
        "id": RUN_ID, "name": "demo", "status": "succeeded", "created": "2026-01-01T12:00:00+00:00",
        "world_size": 2, "cluster": "local", "attempts": [{"n": 1, "exit_code": 0}], "exit_code": 0,
        "launch": {"args": ["--steps", "4"], "cwd": str(lab.shared)}, "explanation": None})
    for step in range(1, 5):
        append_jsonl(run / "metrics.jsonl", {"step": step, "loss": 5.0 - step, "tokens_per_s": 100.0 * step})
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"step": 5, "loss"')  # a writer mid-append
    append_jsonl(run / "events.jsonl", {"time": 1.0, "event": "launched", "attempt": 1})
    append_jsonl(run / "events.jsonl", {"time": 2.0, "event": "finished", "status": "succeeded"})
    (run / "logs" / "launcher.log").write_text("launching\n")
    (run / "logs" / "rank0.log").write_text("".join(f"step {i}\n" for i in range(1, 5)))
    (run / "logs" / "rank1.log").write_text("rank one\n")
    for step, committed in ((2, True), (4, True), (5, False)):
        ck = run / "checkpoints" / f"step-{step}"
        ck.mkdir(parents=True)
        if committed:
            atomic_write_json(ck / "COMMIT.json", {"step": step})
    (run / "checkpoints" / "latest").write_text("step-4")
    (lab.shared / "runs" / PENDING_ID).mkdir()
    return run


def test_unauthenticated_requests_are_refused_with_json(lab, runs):
    for method, path in (("GET", "cluster"), ("GET", "runs"), ("GET", f"runs/{RUN_ID}/logs/rank0.log"),
                         ("POST", "runs"), ("POST", f"runs/{RUN_ID}/stop")):
        res = lab.api(method, path, {"script": "x.py"} if method == "POST" else None, token=False)
        assert res.status == 403, (method, path, res.status)
        body = res.json()
        assert body["status"] == 403 and "token" in body["hint"]
        assert "Traceback" not in res.body.decode()
    wrong = lab.api("GET", "runs", headers={"Authorization": "token " + "0" * 48}, token=False)
    assert wrong.status == 403
    zh = lab.api("GET", "runs", headers={"X-Dscluster-Lang": "zh-TW"}, token=False)
    assert zh.status == 403 and "token" in zh.json()["hint"] and "登入" in zh.json()["hint"]
    method = lab.api("POST", "cluster", {})
    assert method.status == 405 and "GET" in method.json()["hint"]


def test_browser_session_post_needs_xsrf(lab, runs):
    opener, jar = lab.cookie_opener()
    # Logged in by cookie: reads work, a POST without the XSRF token is refused ...
    assert lab.api("GET", "runs", token=False, opener=opener).status == 200
    res = lab.api("POST", f"runs/{RUN_ID}/stop", token=False, opener=opener)
    assert res.status == 403 and "xsrf" in res.json()["message"].lower()
    # ... and passes XSRF with it (then answers for the finished run: nothing to stop).
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    ok = lab.api("POST", f"runs/{RUN_ID}/stop", token=False, opener=opener, headers={"X-XSRFToken": xsrf})
    assert ok.status == 202 and ok.json()["stopping"] is False


def test_cluster_lists_local_node_with_a_fresh_sample(lab):
    body = lab.api("GET", "cluster").json()
    assert body["source"] == "local" and len(body["nodes"]) == 1
    node = body["nodes"][0]
    assert node["local"] is True
    sample = node["sample"]
    assert sample["memory"]["total"] > 0 and sample["cpu"]["count"] >= 1
    assert sample["stale"] is False


def test_run_list_and_detail_tolerate_half_written_runs(lab, runs):
    listed = {r["id"]: r for r in lab.api("GET", "runs").json()["runs"]}
    assert listed[RUN_ID]["status"] == "succeeded"
    assert listed[RUN_ID]["step"] == 4 and listed[RUN_ID]["loss"] == 1.0 and listed[RUN_ID]["total_steps"] == 4
    assert listed[PENDING_ID]["status"] == "pending"  # no run.json yet
    detail = lab.api("GET", f"runs/{RUN_ID}").json()
    assert [f["name"] for f in detail["logs"]] == ["launcher.log", "rank0.log", "rank1.log"]
    assert lab.api("GET", f"runs/{PENDING_ID}").status == 200


def test_metrics_and_events_since_an_offset(lab, runs):
    first = lab.api("GET", f"runs/{RUN_ID}/metrics").json()
    assert [r["step"] for r in first["records"]] == [1, 2, 3, 4]  # the torn line is left for later
    again = lab.api("GET", f"runs/{RUN_ID}/metrics?offset={first['offset']}").json()
    assert again["records"] == [] and again["offset"] == first["offset"]
    with open(runs / "metrics.jsonl", "a") as f:
        f.write(': 0.5}\n')  # the writer finishes its line
    more = lab.api("GET", f"runs/{RUN_ID}/metrics?offset={first['offset']}").json()
    assert more["records"] == [{"step": 5, "loss": 0.5}]
    events = lab.api("GET", f"runs/{RUN_ID}/events").json()
    assert [e["event"] for e in events["records"]] == ["launched", "finished"]


def test_log_tail_per_rank_since_an_offset(lab, runs):
    tail = lab.api("GET", f"runs/{RUN_ID}/logs/rank0.log").json()
    assert tail["text"].endswith("step 4\n")
    with open(runs / "logs" / "rank0.log", "a") as f:
        f.write("step 5\n")
    nxt = lab.api("GET", f"runs/{RUN_ID}/logs/rank0.log?offset={tail['offset']}").json()
    assert nxt["text"] == "step 5\n"
    assert lab.api("GET", f"runs/{RUN_ID}/logs/rank1.log").json()["text"] == "rank one\n"


def test_checkpoints_show_commit_state(lab, runs):
    cks = lab.api("GET", f"runs/{RUN_ID}/checkpoints").json()["checkpoints"]
    assert [(c["step"], c["committed"], c["latest"]) for c in cks] == [(2, True, False), (4, True, True),
                                                                        (5, False, False)]


@pytest.mark.parametrize("method,path,body,status,setting", [
    ("GET", f"runs/{RUN_ID}/metrics?offset=abc", None, 400, "offset"),
    ("GET", f"runs/{RUN_ID}/metrics?offset=-5", None, 400, "offset"),
    ("GET", "runs/no-such-run-20260101-000000-0000", None, 404, "run_id"),
    ("GET", "no/such/endpoint", None, 404, "path"),
    ("POST", "cluster", {}, 405, None),
    ("GET", "runs/..%2F..%2Fetc", None, 400, "run_id"),
    ("GET", f"runs/{RUN_ID}/logs/..%2Frun.json", None, 404, "log"),
    ("GET", f"runs/{RUN_ID}/logs/%2Fetc%2Fpasswd", None, 404, "log"),
    ("POST", "runs", b"{not json", 400, "body"),
    ("POST", "runs", b"[1, 2]", 400, "body"),
    ("POST", "runs", {"args": "--steps 3"}, 400, "script"),
    ("POST", "runs", {"script": "-m dscluster.train", "args": "'unclosed"}, 400, "args"),
    ("POST", "runs", {"script": "-m dscluster.train", "max_restarts": -1}, 400, "max_restarts"),
    ("POST", "runs", {"script": "-m dscluster.train", "config": "{\"train_batch_size\": "}, 400, "config"),
    ("GET", f"runs/{RUN_ID}/events?offset=99999999999999999999999", None, 400, "offset"),
    ("GET", f"runs/{RUN_ID}/metrics?max=-1", None, 400, "max"),
    ("POST", "runs", b"[" * 100000 + b"]" * 100000, 400, "body"),
    ("POST", "validate", {"script": "-m dscluster.train", "cluster": "/dev/zero"}, 400, "cluster"),
    ("POST", f"runs/{RUN_ID}/restart", {"env": ["HF_TOKEN"]}, 400, "env"),
    ("POST", "validate", {"script": 5}, 400, "script"),
    ("POST", "validate", {"script": "-m dscluster.train", "nprocz": 2}, 400, "nprocz"),
    ("POST", "validate", {"script": "-m dscluster.train", "env": ["HF_TOKEN"]}, 400, "env"),
    ("POST", "validate", {"script": "-m "}, 400, "script"),
])
def test_malformed_requests_get_4xx_json_naming_the_setting(lab, runs, method, path, body, status, setting):
    raw = body if isinstance(body, bytes) else None
    res = lab.api(method, path, None if raw else body, raw=raw)
    assert res.status == status, res.body
    payload = res.json()
    assert payload["setting"] == setting and payload["message"]
    assert "Traceback" not in res.body.decode()


def test_invalid_deepspeed_config_is_refused_before_anything_starts(lab, runs):
    pytest.importorskip("dscluster.runs.preparing.prepare")
    before = set(os.listdir(lab.shared / "runs"))
    bad = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1, "train_batch_size": 7}
    res = lab.api("POST", "runs", {"script": "-m dscluster.train", "args": "--steps 2", "config": json.dumps(bad)})
    assert res.status == 400, res.body
    assert "train_batch_size" in res.json()["message"]
    assert set(os.listdir(lab.shared / "runs")) == before


def test_metrics_first_load_can_be_thinned(lab, runs):
    res = lab.api("GET", f"runs/{RUN_ID}/metrics?max=2").json()
    steps = [r["step"] for r in res["records"]]
    assert res["stride"] >= 2 and steps[0] == 1 and steps[-1] == max(steps) and len(steps) <= 3
    assert lab.api("GET", f"runs/{RUN_ID}/metrics?max=x").status == 400


def test_answers_come_in_the_language_the_panel_names(lab, runs):
    from dscluster import explain

    failed = lab.shared / "runs" / "down-20260101-140000-ef56"
    failed.mkdir()
    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", retry=False,
                         nodes="node9", limit="60", heal="dscluster sim heal node9")
    atomic_write_json(failed / "run.json", {"id": failed.name, "status": "failed", "explanation": exp.to_dict()})
    zh = {"X-Dscluster-Lang": "zh-TW"}
    detail = lab.api("GET", f"runs/{failed.name}", headers=zh).json()
    assert "node9 在失敗後 60 秒內沒有恢復" in detail["run"]["explanation"]["cause"]
    listed = {r["id"]: r for r in lab.api("GET", "runs", headers=zh).json()["runs"]}
    assert "然後" in listed[failed.name]["explanation"]["fix"]
    missing = lab.api("GET", "runs/no-such-run-20260101-000000-0000", headers=zh)
    assert missing.status == 404 and missing.json()["message"] != \
        lab.api("GET", "runs/no-such-run-20260101-000000-0000").json()["message"]
    # without the header: the server's own language (English here), and the record's text as written
    assert lab.api("GET", f"runs/{failed.name}").json()["run"]["explanation"]["cause"].startswith("node9 did not")


def test_runs_show_their_owner_and_the_queue_answers(lab, runs):
    listing = lab.api("GET", "runs").json()
    assert listing["me"] and isinstance(listing["admin"], bool)
    run = next(r for r in listing["runs"] if r["id"] == RUN_ID)
    # a record from before owners: the owner of its run.json
    assert run["owner"] == listing["me"] and run["mine"] is True and run["gpus"] == []
    queue = lab.api("GET", "queue")
    assert queue.status == 200 and queue.json()["held"] == [] and queue.json()["queue"] == []


def test_a_non_owner_stop_answers_403_with_the_message():
    from dscluster.errors import GpusBusy, NotOwner
    from dscluster.jupyter.handlers import _status_for

    assert _status_for(NotOwner("run r belongs to ann")) == 403
    assert _status_for(GpusBusy("the GPUs of this launch are taken")) == 409

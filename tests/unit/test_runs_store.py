"""Run store and secrets redaction (pure / filesystem only)."""

import json
import os

import pytest

from dscluster.errors import RunError
from dscluster.launcher import redact
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


def _record(name="train"):
    return RunRecord.from_json({"id": store.new_run_id(name), "name": name, "argv": ["train.py"], "env": {}})


def test_run_id_format_and_safe_names():
    rid = store.new_run_id("my run/../x")
    name, date, time_, tag = rid.rsplit("-", 3)
    assert name == "my-run-..-x"
    assert len(date) == 8 and len(time_) == 6 and len(tag) == 4
    assert "/" not in rid and " " not in rid


def test_create_list_load_and_resolve(tmp_path):
    a, b = _record("alpha"), _record("beta")
    store.create_run(tmp_path, a)
    store.create_run(tmp_path, b)
    ids = [r.id for r in store.list_runs(tmp_path)]
    assert set(ids) == {a.id, b.id}
    rec = store.load_run(tmp_path, a.id)
    assert rec.status == "pending" and rec.attempts == () and rec.explanation is None
    assert store.resolve_run_dir(tmp_path, "alpha") == store.run_path(tmp_path, a.id)
    assert store.resolve_run_dir(tmp_path, b.id[:12]).name == b.id
    with pytest.raises(RunError):
        store.load_run(tmp_path, "nope")
    assert (store.run_path(tmp_path, a.id) / "logs").is_dir()


def test_runs_started_within_one_second_are_listed_newest_first(tmp_path):
    # Seen in CI: the README's detached launch and the sbatch launch after it got the same `created` second, and the
    # earlier run was shown (and taken) as the newest. Within a second, the first event's exact time decides.
    ids = [store.new_run_id(n) for n in ("zz-first", "aa-second", "mm-third")]
    for i, rid in enumerate(ids):
        rec = RunRecord.from_json({"id": rid, "name": "train", "argv": ["train.py"], "env": {},
                                   "created": "2026-12-06T07:13:03+00:00"})
        store.create_run(tmp_path, rec)
        store.append_event(store.run_path(tmp_path, rid), "created" if i != 1 else "slurm-submitted", t=100.0 + i)
    assert [r.id for r in store.list_runs(tmp_path)] == ids[::-1]
    # The node user owns the run directory: a FIFO planted as events.jsonl is never waited on (read by fsutil's rule).
    import threading

    events = store.run_path(tmp_path, ids[0]) / "events.jsonl"
    events.unlink()
    os.mkfifo(events)
    listed = []
    reader = threading.Thread(target=lambda: listed.extend(r.id for r in store.list_runs(tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    assert sorted(listed) == sorted(ids)


def test_record_writes_are_atomic_and_events_append(tmp_path):
    rec = _record()
    run_dir = store.create_run(tmp_path, rec)
    store.write_record(run_dir, rec.replace(status="running"))
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
    assert not [p for p in run_dir.iterdir() if p.name.endswith(".tmp")]
    store.append_event(run_dir, "launched", attempt=1)
    with open(run_dir / "events.jsonl", "a") as f:
        f.write('{"half": ')  # a writer killed mid-line never breaks readers
    store.append_event(run_dir, "finished", status="succeeded")
    events = store.read_events(run_dir)
    assert [e["event"] for e in events][:1] == ["launched"]


def test_a_broken_record_is_skipped_by_list(tmp_path):
    store.create_run(tmp_path, _record("good"))
    bad = tmp_path / "runs" / "bad"
    bad.mkdir()
    (bad / "run.json").write_text("{not json")
    assert [r.record.name for r in store.list_runs(tmp_path)] == ["good"]


@pytest.mark.parametrize("name,secret", [
    ("HF_TOKEN", True), ("WANDB_API_KEY", True), ("AWS_SECRET_ACCESS_KEY", True), ("DB_PASSWORD", True),
    ("GOOGLE_APPLICATION_CREDENTIALS", True), ("PATH", False), ("OMP_NUM_THREADS", False),
    ("TOKENIZERS_PARALLELISM", False), ("NCCL_SOCKET_IFNAME", False), ("max_tokens", False),
])
def test_secret_names(name, secret):
    assert redact.is_secret_name(name) is secret


def test_redaction_of_env_text_and_argv():
    env = {"HF_TOKEN": "hf_abc", "PATH": "/bin"}
    assert redact.redact_env(env) == {"HF_TOKEN": "***", "PATH": "/bin"}
    assert "hf_abc" not in redact.redact_text("export HF_TOKEN=hf_abc; cd /x")
    argv = redact.redact_argv(["train.py", "--api-key", "sk-1", "--password=pw", "--steps", "5",
                               "--deepspeed_config", "ds.json"])
    assert "sk-1" not in argv and "pw" not in " ".join(argv) and argv[-2:] == ["--deepspeed_config", "ds.json"]
    assert "5" in argv


def test_the_runs_sim_down_stops_first_are_the_active_ones_of_that_cluster(tmp_path):
    from dscluster.commands.sim import _active_runs

    def on(sim, status, name="train"):
        rec = _record(name)
        arg = str(tmp_path / "home" / "sims" / sim / "dscluster.toml") if sim else None
        rec = RunRecord.from_json({**rec.to_json(), "status": status,
                                   "launch": {**rec.to_json().get("launch", {}), "cluster_arg": arg}})
        store.create_run(tmp_path, rec)
        return rec

    running = on("default", "running", "a")
    on("default", "succeeded", "b")
    on("other", "running", "c")  # another cluster sharing the directory (`sim up --shared DIR`)
    on(None, "running", "d")  # a run of this machine
    assert [d.name for d in _active_runs(tmp_path, "default")] == [running.id]

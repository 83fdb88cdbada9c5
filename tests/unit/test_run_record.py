"""The typed run record: run.json read and written through RunRecord/LaunchSpec, old records (written by
dscluster before records had a version) still read, and the cluster spec recorded as resolved at launch,
so a run's nodes are reached the same way from any directory and after its hostfile is edited."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dscluster.cluster import identity
from dscluster.cluster.spec import ClusterSpec, load_spec
from dscluster.launcher.plan import build_plan
from dscluster.runs.preparing.prepare import prepare
from dscluster.runs.records import store
from dscluster.runs.records.record import RECORD_VERSION, LaunchSpec, RunRecord
from dscluster.runs.records.request import RunRequest
from dscluster.runs.supervising.nodes import node_links, node_names

# run.json files written by dscluster before the typed record (commit 255f399): one created by `launch`
# on a two-node cluster (pending), one a local run that the supervisor restarted once and finished.
RECORDS = Path(__file__).resolve().parents[1] / "data" / "run_records"
OLD = sorted(RECORDS.glob("*_v0.json"))


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_old_record_reads_and_writes_back_unchanged(path):
    data = json.loads(path.read_text())
    record = RunRecord.from_json(data)
    assert record.version == 0 and record.id == data["id"] and record.status == data["status"]
    assert record.launch.hosts == tuple((h, s) for h, s in data["launch"]["hosts"])
    assert record.launch.cluster_spec is None  # not recorded then: its `cluster_arg` path is read again
    out = record.to_json()
    assert {k: v for k, v in out.items() if k != "version"} == data
    assert LaunchSpec.from_json(data["launch"]).to_json() == data["launch"]
    assert RunRecord.from_json(out) == record


def test_an_old_records_launch_builds_the_same_plan():
    data = json.loads((RECORDS / "cluster_pending_v0.json").read_text())
    spec = LaunchSpec.from_json(data["launch"])
    req = spec.request(2, 23456, run_id=data["id"], run_dir=Path("/runs") / data["id"], secrets={"HF_TOKEN": "s"},
                       user_env={"DSCLUSTER_RESUME_STEP": "4", "OMP_NUM_THREADS": "9"}, base_env={})
    assert (req.attempt, req.master_port, req.hosts) == (2, 23456, (("node1", 2), ("node2", 2)))
    assert req.target.args == tuple(data["launch"]["rank_args"])  # the run's own ds_config copy
    # The recorded environment wins over the attempt's, and the secrets (never recorded) over both.
    assert req.user_env == {"DSCLUSTER_RESUME_STEP": "4", "OMP_NUM_THREADS": "2", "HF_TOKEN": "s"}
    plan = build_plan(req)
    assert plan.world_size == 4 and "--master_port=23456" in plan.argv


def _cluster(tmp_path: Path) -> tuple[Path, ClusterSpec]:
    """A two-node cluster spec with its identity, in a project directory with a hostfile of its nodes."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "dscluster.toml").write_text(
        f'[cluster]\nname = "rec"\nshared_dir = "{tmp_path / "shared"}"\nssh_user = "dscluster"\n\n'
        '[[nodes]]\naddress = "10.77.0.2"\nname = "node1"\nslots = 1\n\n'
        '[[nodes]]\naddress = "10.77.0.3"\nname = "node2"\nslots = 1\n')
    (project / "hostfile").write_text("node1 slots=1\nnode2 slots=1\n")
    (project / "train.py").write_text("print('train')\n")
    spec = load_spec(project / "dscluster.toml")
    identity.ensure_identity(spec)
    return project, spec


def test_a_new_record_is_versioned_and_round_trips(dscluster_home, tmp_path, monkeypatch):
    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    run_dir = store.create_run(prep.shared, prep.record)
    written = json.loads((run_dir / "run.json").read_text())
    assert written["version"] == RECORD_VERSION
    record = RunRecord.from_json(written)
    assert record.to_json() == written and record.launch.cluster_spec.name == "rec"
    assert store.read_record(run_dir) == record == prep.record.replace(created=written["created"])


def test_a_run_reaches_its_nodes_from_another_directory_after_its_hostfile_is_edited(
        dscluster_home, tmp_path, monkeypatch):
    # `launch --hostfile hostfile` in the project (its ./dscluster.toml gives the SSH settings); the
    # supervisor runs with cwd "/", and `stop` may run anywhere: both must find the same nodes and identity.
    project, spec = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    at_launch = node_links(prep.record)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no dscluster.toml, no hostfile here
    (project / "hostfile").write_text("node1 slots=1\n")  # node2 taken out while the run goes on
    links = node_links(prep.record)
    assert links == at_launch and list(links) == ["node1", "node2"]
    ssh_config = identity.cluster_state_dir(spec, create=False) / "ssh_config"
    assert links["node2"][:3] == ["ssh", "-F", str(ssh_config)] and links["node2"][-2:] == ["node2", "--"]
    assert "ControlMaster=no" in links["node2"]  # a run's own connection (teardown kills it)
    assert node_names(prep.record) == {"node1": "node1", "node2": "node2"}


def test_a_record_from_before_the_recorded_spec_still_reaches_its_nodes(dscluster_home, tmp_path, monkeypatch):
    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], cluster=str(project / "dscluster.toml"), skip_doctor=True))
    old = dataclasses.replace(prep.record, launch=dataclasses.replace(prep.record.launch, cluster_spec=None))
    assert list(node_links(old)) == ["node1", "node2"]  # resolved from its `cluster_arg`, as it was launched


def test_a_restart_runs_on_the_recorded_cluster_from_anywhere(dscluster_home, tmp_path, monkeypatch):

    from dscluster.runs import service

    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    run_dir = store.create_run(prep.shared, prep.record)
    store.write_record(run_dir, store.read_record(run_dir).replace(status="failed"))
    monkeypatch.chdir(tmp_path)
    (project / "hostfile").write_text("node1 slots=1\n")
    request, _ = service.restart_request(run_dir)
    again = prepare(service.resolved(request).but(skip_doctor=True))
    assert again.record.launch.hosts == (("node1", 1), ("node2", 1)) and again.record.cluster == "rec"
    assert again.record.launch.cwd == str(project)  # the program is found where it was launched
    elsewhere, _ = service.restart_request(run_dir, hostfile=str(project / "hostfile"))
    assert elsewhere.place.cluster_spec is None and elsewhere.place.cluster == str(project / "hostfile")


def test_a_recorded_spec_gets_the_spec_files_checks(dscluster_home, tmp_path, monkeypatch):
    # run.json lives where the node user can write: an address rewritten there must not reach ssh_config.
    from dscluster.errors import ConfigError

    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    data = prep.record.to_json()
    data["launch"]["cluster_spec"]["nodes"][1]["address"] = "10.77.0.3\n  ProxyCommand touch /tmp/owned"
    with pytest.raises(ConfigError):
        node_links(RunRecord.from_json(data))


def test_a_record_written_by_this_code_reads_and_writes_back_byte_for_byte(dscluster_home, tmp_path, monkeypatch):
    # create_run -> read_record -> write_record: the same run.json, and no key that lives only in memory
    # (a listing's directory, the fields' bookkeeping) ever reaches it.
    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    run_dir = store.create_run(prep.shared, prep.record)
    first = (run_dir / "run.json").read_bytes()
    store.write_record(run_dir, store.read_record(run_dir))
    assert (run_dir / "run.json").read_bytes() == first
    [listed] = store.list_runs(prep.shared)
    assert listed.dir == run_dir and listed.record == store.read_record(run_dir)
    store.write_record(listed.dir, listed.record)
    assert (run_dir / "run.json").read_bytes() == first
    written = json.loads(first)
    assert not {"_dir", "dir", "run_dir", "present", "extra"} & set(written)
    assert not {"present", "extra"} & set(written["launch"])
    assert written["launch"]["allow_shrink"] is False  # a setting of the run, written even when off


def test_the_supervisors_updates_round_trip_with_their_nulls(dscluster_home, tmp_path):
    # What the supervisor writes as a run goes (attempts, its pid, waiting_for cleared to null, a shrink)
    # survives a read and a write unchanged: the typed fields say what they were, absent or null.
    from dscluster.runs.records.record import Attempt

    record = RunRecord(id=store.new_run_id("sup"), launch=LaunchSpec(program="t.py", hosts=(("n1", 1), ("n2", 1))))
    run_dir = store.create_run(tmp_path / "shared", record)
    record = store.update_record(run_dir, store.read_record(run_dir), status="running", supervisor_pid=42,
                                 supervisor_host="here", attempts=[Attempt(1, started="t0", master_port=23456,
                                                                           rank_nodes=("n1", "n2"))])
    record = store.update_record(run_dir, record, status="restarting", waiting_for=["n2"])
    record = store.update_record(run_dir, record, waiting_for=None, shrinks=[{"lost": ["n2"], "text": "n2 lost"}])
    on_disk = json.loads((run_dir / "run.json").read_text())
    assert on_disk["waiting_for"] is None and on_disk["supervisor_pid"] == 42 and on_disk["shrinks"][0]["text"]
    assert on_disk["attempts"] == [{"n": 1, "started": "t0", "ended": None, "exit_code": None, "reason": None,
                                    "master_port": 23456, "rank_nodes": ["n1", "n2"]}]
    again = store.read_record(run_dir)
    assert again == record and again.to_json() == on_disk and again.attempts[0].rank_nodes == ("n1", "n2")
    as_json = record.replace(attempts=on_disk["attempts"])  # attempts given as run.json has them
    assert as_json.attempts == record.attempts and isinstance(as_json.attempts[0], Attempt)
    assert "ended" not in on_disk and "slurm" not in on_disk and "batch_plan" not in on_disk


def test_unknown_keys_survive_and_a_badly_typed_record_is_damaged(tmp_path):
    from dscluster.errors import RunError

    data = {"id": "r-1", "launch": {"program": "t.py", "from_the_future": 1}, "annotated_by": "a tool",
            "attempts": [{"n": 1, "gpu_seconds": 3.5}]}
    record = RunRecord.from_json(data)
    assert record.extra == {"annotated_by": "a tool"} and record.launch.extra == {"from_the_future": 1}
    out = record.to_json()
    assert out["annotated_by"] == "a tool" and out["launch"]["from_the_future"] == 1
    assert out["attempts"][0]["gpu_seconds"] == 3.5
    run_dir = tmp_path / "runs" / "r-2"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"id": "r-2", "launch": {"program": "t", "hosts": [["a"]]}}))
    with pytest.raises(RunError, match="damaged"):
        store.read_record(run_dir)
    assert store.list_runs(tmp_path) == []  # skipped, not a crash of the listing


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_old_record_reads_through_every_view(path, dscluster_home, tmp_path, capsys):
    # A v0 run.json in a runs directory: the store, the summary (status, attempts, checkpoints), the
    # CLI's status/runs/logs and the notebook API read it as they read a new one.
    from dscluster.api import Run
    from dscluster.cli import main
    from dscluster.runs.views.summary import summary

    data = json.loads(path.read_text())
    shared = tmp_path / "shared"
    run_dir = shared / "runs" / data["id"]
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps(data))
    record = store.read_record(run_dir)
    assert record.version == 0 and [r.id for r in store.list_runs(shared)] == [data["id"]]
    shown = summary(record, run_dir)
    assert shown.status == data["status"] and len(shown.attempts) == len(data["attempts"])
    view = shown.to_json()
    assert [a["n"] for a in view["attempts"]] == [a["n"] for a in data["attempts"]]
    assert view["last_checkpoint_step"] == data["last_checkpoint_step"] and "slurm" not in view and "scheduler" not in view
    args = data["launch"]["args"]
    named = args[args.index("--save-dir") + 1] if "--save-dir" in args else None
    assert store.save_dir(run_dir, record) == (Path(data["cwd"]) / named if named else run_dir / "checkpoints")
    assert main(["status", data["id"]]) == (5 if data["status"] == "failed" else 0)
    out = capsys.readouterr().out
    assert data["id"] in out and "attempt" in out if data["attempts"] else data["id"] in out
    assert main(["runs"]) == 0 and data["id"] in capsys.readouterr().out
    assert Run(data["id"], [shared / "runs"]).status == data["status"]
    store.write_record(run_dir, record)
    assert {k: v for k, v in json.loads((run_dir / "run.json").read_text()).items() if k != "version"} == data


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_old_record_restarts_and_stops_through_the_service(path, dscluster_home, tmp_path):
    # The service's readers (restart_request, stop) take a v0 record as the store reads it.
    from dscluster.runs import service

    data = json.loads(path.read_text())
    run_dir = tmp_path / "shared" / "runs" / data["id"]
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({**data, "status": "failed"}))
    request, record = service.restart_request(run_dir, env={"HF_TOKEN": "again"} if "HF_TOKEN" in data["env"] else None)
    launch = data["launch"]
    prog, env = request.program, dict(e.split("=", 1) for e in request.program.env)
    assert record.id == data["id"] and prog.program == launch["program"]
    assert list(prog.args[:len(launch["args"])]) == launch["args"]
    assert request.supervision.max_restarts == launch["max_restarts"]
    assert {k: env[k] for k in launch["env"]} == launch["env"]
    if launch["launcher"] == "local":
        assert request.place.local == launch["local_procs"] and request.place.cluster is None
    else:
        assert request.place.cluster == launch["cluster_arg"] and env["HF_TOKEN"] == "again"
    assert service.stop(run_dir) == {"id": data["id"], "status": "failed", "stopping": False}


def test_the_supervisor_is_handed_the_record_run_json_holds(dscluster_home, tmp_path, monkeypatch):
    # The supervisor writes its record over run.json: what it is handed must be what was created
    # (its `created` date included), or its first save would lose fields.
    from dscluster.runs.preparing import start

    project, _ = _cluster(tmp_path)
    monkeypatch.chdir(project)
    prep = prepare(RunRequest.of(command=["train.py"], hostfile="hostfile", skip_doctor=True))
    handed = []
    monkeypatch.setattr(start, "start_supervisor", lambda run_dir, record, secrets: handed.append(record) or 4242)
    run_id = start.launch_run(prep.shared, prep.record, prep.secrets)
    on_disk = json.loads((store.run_path(prep.shared, run_id) / "run.json").read_text())
    assert handed[0].to_json() == on_disk and on_disk["created"]


def test_a_slurm_record_written_before_the_scheduler_field_still_loads(dscluster_home, tmp_path, capsys):
    """run.json of a Slurm run as dscluster wrote it before the record's scheduler fields were generic
    (`launch.slurm`, `slurm`): read into `scheduler` (the request a restart asks for again, the job the views
    show), and written back under the same keys, byte for byte the same JSON."""
    from dscluster.cli import main

    data = json.loads((RECORDS / "slurm_own_job_v1.json").read_text())
    record = RunRecord.from_json(data)
    assert record.launch.scheduler == data["launch"]["slurm"] and record.scheduler == data["slurm"]
    assert "slurm" not in record.extra and "slurm" not in record.launch.extra
    assert record.to_json() == data
    ask = record.launch.backend.recorded_request(record.launch.scheduler)
    assert (ask.nodes, ask.tasks_per_node, ask.partition, ask.time, ask.ranks) == (2, 2, "debug", "30", 4)
    run_dir = tmp_path / "shared" / "runs" / data["id"]
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps(data))
    assert main(["status", data["id"]]) == 0
    assert "job 42 COMPLETED on node0,node1" in capsys.readouterr().out
    assert main(["runs"]) == 0 and f"{data['id']} (slurm 42)" in capsys.readouterr().out
    from dscluster.runs.views.summary import summary

    assert summary(store.read_record(run_dir), run_dir, live=False).to_json()["slurm"]["job_id"] == "42"

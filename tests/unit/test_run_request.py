"""One typed launch request (runs/options.py `RunRequest`): the command line, the Python API and the panel's
form build the same one, its defaults are defined once, and a new option reaches the layer that reads it
through the CLI flag and its group alone."""

from __future__ import annotations

import dataclasses

import pytest

from dscluster.cli import build_parser
from dscluster.commands.launch import request_from_args
from dscluster.jupyter.launching import parse_launch
from dscluster.runs import service
from dscluster.runs.records.request import DEFAULTS, FIELDS, Place, Program, RunRequest, Supervision


def _cli(argv: list[str]) -> RunRequest:
    args = build_parser().parse_args(["launch", *argv])
    return request_from_args(args, list(args.command), args.module)


def test_the_cli_the_api_and_the_panel_build_one_request(dscluster_home):
    # The same launch asked three ways: `dscluster launch`, the panel's form (the notebook API posts the same
    # body through parse_launch) and a request made in code; resolved, they are one request.
    cli = _cli(["--local", "2", "--max-restarts", "1", "--env", "A=1", "--wait", "train.py", "--x", "1"])
    form = parse_launch({"script": "train.py", "args": "--x 1", "nprocs": 2, "max_restarts": 1, "env": {"A": "1"},
                         "wait": True})
    code = RunRequest.of(command=["train.py", "--x", "1"], local=2, max_restarts=1, env=["A=1"], wait=True)
    assert service.resolved(cli) == service.resolved(form) == code
    assert code.program == Program("train.py", args=("--x", "1"), env=("A=1",))
    assert code.place == Place(local=2) and code.supervision == Supervision(max_restarts=1)


def test_defaults_are_defined_once():
    # The command line's defaults are the request's own; a request built from nothing has them.
    args = build_parser().parse_args(["launch", "train.py"])
    assert {k: getattr(args, k) for k in ("max_restarts", "restart_wait", "stall_timeout", "heartbeat_timeout")} \
        == {k: DEFAULTS[k] for k in ("max_restarts", "restart_wait", "stall_timeout", "heartbeat_timeout")}
    assert _cli(["train.py"]).supervision == Supervision() == RunRequest.of(command=["t.py"]).supervision
    # ... and so do the panel's form (as it is first shown, and posted with its field left out) and the Python API:
    # a run launched from a notebook is restarted as often as one launched from a terminal.
    import inspect

    from dscluster import api
    from dscluster.jupyter.launching import form_defaults

    assert parse_launch({"script": "train.py"}).supervision.max_restarts == DEFAULTS["max_restarts"]
    assert parse_launch({"script": "train.py", "max_restarts": ""}).supervision.max_restarts == DEFAULTS["max_restarts"]
    assert form_defaults(type("View", (), {"spec_path": None, "name": "local"})())["max_restarts"] == DEFAULTS["max_restarts"]
    assert inspect.signature(api.launch).parameters["max_restarts"].default is None  # None: the request's default
    # Every setting has one group: a name in two groups would be set in one and read in the other.
    names = [f.name for cls in (Program, Place, Supervision) for f in dataclasses.fields(cls)]
    assert len(names) == len(set(names)) and set(names) <= set(FIELDS)
    with pytest.raises(TypeError, match="max_restart"):
        RunRequest.of(command=["t.py"], max_restart=1)  # a misspelt setting is refused, never dropped


def test_no_backend_option_shadows_a_setting_of_the_request():
    # request_from_args passes every parsed option named like a setting: a backend's own option (its
    # scheduler request, launcher/backends/*) of the same name would be taken for the setting.
    from dscluster.launcher import backends

    dests = {o.flag.lstrip("-").replace("-", "_") for b in backends.every() for o in b.launch_options()}
    assert dests and not dests & set(FIELDS)


def test_a_new_option_touches_the_cli_and_the_layer_that_reads_it(dscluster_home, tmp_path, monkeypatch):
    # The worked check of issue 43: expose a setting the supervisor reads (ping_timeout) as a flag. Its group
    # already holds it; the flag is one add_argument in commands/launch.py; nothing between the parser and
    # the supervisor's `launch.supervision` is edited: the request, prepare, the record and a restart carry it.
    from dscluster.commands.launch import add_launch_options
    from dscluster.runs.preparing.prepare import prepare
    from dscluster.runs.records import store

    parser = build_parser()
    launch = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(" launch"))
    launch.add_argument("--ping-timeout", type=float)  # the one line a view adds
    assert add_launch_options  # the flag would live beside launch's others
    (tmp_path / "t.py").write_text("print('t')\n")
    args = parser.parse_args(["launch", "--local", "1", "--ping-timeout", "7", "t.py"])
    request = request_from_args(args, list(args.command), args.module).but(cwd=str(tmp_path))
    assert request.supervision.ping_timeout == 7.0
    prep = prepare(request, dry_run=True)
    assert prep.record.launch.supervision.ping_timeout == 7.0  # what the supervisor reads
    run_dir = store.create_run(prep.shared, prep.record)
    assert store.read_record(run_dir).launch.supervision == request.supervision  # the record stores the group
    assert store.read_record(run_dir).to_json()["launch"]["ping_timeout"] == 7.0  # run.json's keys as before
    store.write_record(run_dir, store.read_record(run_dir).replace(status="failed"))
    again, _ = service.restart_request(run_dir)
    assert again.supervision == request.supervision  # a restart keeps the run's supervision


def test_a_run_json_written_before_the_typed_request_restarts_with_its_settings(dscluster_home, tmp_path):
    # cluster_failed_v1.json: run.json as dscluster wrote it before this request (commit 024836b: `launch` on a
    # two-node spec with --max-restarts 3 --stall-timeout 60 --restart-wait 30 --allow-shrink --share-gpus).
    import json
    from pathlib import Path

    from dscluster.runs.records.record import RunRecord

    data = json.loads((Path(__file__).resolve().parents[1] / "data" / "run_records" / "cluster_failed_v1.json").read_text())
    record = RunRecord.from_json(data)
    assert record.to_json() == data and RunRecord.from_json(record.to_json()) == record  # read and written unchanged
    assert record.launch.supervision == Supervision(max_restarts=3, stall_timeout=60.0, restart_wait=30.0,
                                                    allow_shrink=True)
    run_dir = tmp_path / "shared" / "runs" / data["id"]
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps(data))
    request, _ = service.restart_request(run_dir, env={"HF_TOKEN": "again"})
    assert request.supervision == Supervision(max_restarts=3, stall_timeout=60.0, restart_wait=30.0, allow_shrink=True)
    assert request.gpus.share_gpus and request.place.cluster_spec.name == "rec"
    assert request.program.program == "train.py" and request.program.cwd == "/srv/project"
    assert sorted(request.program.env)[:2] == ["DSCLUSTER_CHECKPOINT_DIR=" + str(run_dir / "checkpoints"), "HF_TOKEN=again"]


def test_a_backends_own_options_make_the_same_request_from_the_cli_and_the_api(dscluster_home):
    # A scheduler's request asked from a notebook (api.launch(launcher=..., options=...), the body's "options")
    # is the typed one `dscluster launch --launcher NAME --OPTION ...` makes: the backend builds both.
    from dscluster.commands.backendargs import scheduler_request

    args = build_parser().parse_args(["launch", "--launcher", "slurm", "--nodes", "2", "--ntasks-per-node", "3",
                                      "--partition", "debug", "--time", "10", "train.py"])
    cli = request_from_args(args, list(args.command), args.module, scheduler=scheduler_request(args))
    api = parse_launch({"script": "train.py", "launcher": "slurm",
                        "options": {"nodes": 2, "ntasks_per_node": "3", "partition": "debug", "time": "10"}})
    assert cli.scheduler is not None and api.scheduler == cli.scheduler
    assert api.place.launcher == cli.place.launcher == "slurm"
    # A launcher named is never "this machine by default" (the panel's and the API's default without a cluster).
    assert service.resolved(api).place.local is None
    assert service.resolved(parse_launch({"script": "train.py"})).place.local == 1
    assert parse_launch({"script": "train.py", "options": {}}).scheduler is None


@pytest.mark.parametrize(("options", "setting", "words"), [
    ({"node": 2}, "node", "did you mean 'nodes'"),
    ({"nodes": 0}, "nodes", "from 1 to"),
    ({"nodes": True}, "nodes", "whole number"),
    ({"gpus_per_node": -1}, "gpus_per_node", "0 or more"),
    ({"partition": ""}, "partition", "must be text"),
    ({"sbatch": "yes"}, "sbatch", "true or false"),
    ({"sbatch": True}, "options", "from a terminal"),
    (["nodes", 2], "options", "must map"),
])
def test_a_backends_options_from_code_are_checked_as_the_cli_checks_them(options, setting, words):
    from dscluster.errors import UsageError

    with pytest.raises(UsageError) as err:
        parse_launch({"script": "train.py", "launcher": "slurm", "options": options})
    assert err.value.setting == setting and words in str(err.value) + str(err.value.hint), err.value


def test_the_runner_flags_reach_the_plan_and_a_restart_as_given(dscluster_home, tmp_path):
    # DeepSpeed's runner flags are one group of the request (launcher/runnerflags.RunnerFlags): the record keeps
    # it as given, every attempt's plan reads it there, and `dscluster restart` asks again with it, so the new
    # run starts on the same devices with the same launch.py flags (a restart once dropped them all).
    from dscluster.runs.preparing.prepare import prepare
    from dscluster.runs.records import store
    from dscluster.runs.records.record import LaunchSpec

    (tmp_path / "t.py").write_text("print('t')\n")
    request = _cli(["--local", "1", "--include", "localhost:1", "--no_local_rank", "--bind_cores_to_rank",
                    "--master_port", "29599", "t.py"]).but(cwd=str(tmp_path))
    prep = prepare(request, dry_run=True)
    launch = prep.record.launch
    assert launch.runner == request.runner and launch.include == "localhost:1"
    data = launch.to_json()
    assert (data["master_port"], data["no_local_rank"], data["runner_flags"]) == (29599, True, ["--bind_cores_to_rank"])
    assert data["runner"] == {"include": "localhost:1"} and LaunchSpec.from_json(data) == launch
    plan = launch.request(1, 29599, run_id=prep.record.id, run_dir=tmp_path / "run", base_env={})
    from dscluster.launcher.plan import build_plan

    argv = build_plan(plan).argv
    assert "--no_local_rank" in argv and "--bind_cores_to_rank" in argv and "--master_port=29599" in argv, argv
    run_dir = store.create_run(prep.shared, prep.record)
    store.write_record(run_dir, store.read_record(run_dir).replace(status="failed"))
    again, _ = service.restart_request(run_dir)
    assert again.runner == request.runner
    assert prepare(again.but(cwd=str(tmp_path)), dry_run=True).record.launch.include == "localhost:1"
    # Elsewhere (--local N, --hostfile H) the flags that name the old place go; the program's own stay.
    moved, _ = service.restart_request(run_dir, local=1)
    assert (moved.runner.include, moved.runner.master_port) == (None, None)
    assert (moved.runner.no_local_rank, moved.runner.passed) == (True, ("--bind_cores_to_rank",))

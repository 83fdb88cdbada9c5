"""DeepSpeed's runner flags on `dscluster launch`: the same selection as DeepSpeed's runner, each bad value
named with its flag and the fix, and nothing started."""

from __future__ import annotations

import json

import pytest

from dscluster import cli
from dscluster.errors import ConfigError, ExitCode, UsageError
from dscluster.launcher.plan import LaunchRequest, Target, build_plan
from dscluster.launcher.runnerflags import RunnerFlags, check_master_addr, select, select_local

HOSTS = (("node1", 2), ("node2", 2), ("node3", 2))
ADDR = {"10.9.0.1": "node1", "10.9.0.2": "node2", "10.9.0.3": "node3"}


def test_selection_follows_deepspeeds_runner():
    assert select(HOSTS, RunnerFlags()).hosts == HOSTS
    sel = select(HOSTS, RunnerFlags(include="node1@10.9.0.2:1"), ADDR)
    assert sel.hosts == (("node1", 2), ("node2", 1)) and sel.include_arg() == "node1:0,1@node2:1"
    sel = select(HOSTS, RunnerFlags(exclude="node1@node3:0"))
    assert sel.hosts == (("node2", 2), ("node3", 1)) and sel.devices == {"node3": (1,)}
    assert select(HOSTS, RunnerFlags(num_nodes=2, num_gpus=1)).hosts == (("node1", 1), ("node2", 1))
    assert select(HOSTS, RunnerFlags(num_nodes=2, num_gpus=1)).include_arg() is None


@pytest.mark.parametrize("flags, flag, words", [
    (RunnerFlags(include="node9@node1"), "--include", "node9 not in the hostfile"),
    (RunnerFlags(include="node1:7"), "--include", "not 7"),
    (RunnerFlags(include="node1:x"), "--include", "must be numbers"),
    (RunnerFlags(include=""), "--include", "empty"),
    (RunnerFlags(exclude="node1@node2@node3"), "--exclude", "leaves no host"),
    (RunnerFlags(include="node1", exclude="node2"), "--include", "together"),
    (RunnerFlags(include="node1", num_gpus=1), "--num_gpus", "cannot be combined"),
    (RunnerFlags(num_nodes=4), "--num_nodes", "selects 3"),
    (RunnerFlags(num_nodes=0), "--num_nodes", "between 1 and 3"),
    (RunnerFlags(num_gpus=3), "--num_gpus", "only 2"),
])
def test_bad_selection_names_the_flag(flags, flag, words):
    with pytest.raises(UsageError) as err:
        select(HOSTS, flags, ADDR)
    assert err.value.setting == flag and words in err.value.message + " " + err.value.hint


def test_master_addr_must_be_the_first_host():
    resolve = ADDR.get
    label = {"node1": "node1 (10.9.0.1)", "node2": "node2 (10.9.0.2)"}
    check_master_addr("10.9.0.1", HOSTS, label, resolve)
    check_master_addr("node1", HOSTS, label, resolve)
    with pytest.raises(UsageError) as err:
        check_master_addr("10.9.0.2", HOSTS, label, resolve)
    assert "node2 (10.9.0.2), host 2 of the hostfile" in err.value.message and "node1 (10.9.0.1)" in err.value.message
    with pytest.raises(UsageError) as err:
        check_master_addr("192.0.2.7", HOSTS, label, resolve)
    assert "not a host of the hostfile" in err.value.message and "--master_addr=node1" in err.value.hint


def test_this_machine_only():
    assert select_local(None, RunnerFlags(num_gpus=4)) == (4, None)
    assert select_local(None, RunnerFlags(include="localhost:1,3")) == (2, "localhost:1,3")
    with pytest.raises(UsageError, match="disagree"):
        select_local(2, RunnerFlags(num_gpus=3))
    with pytest.raises(UsageError, match="--exclude"):
        select_local(None, RunnerFlags(exclude="localhost:0"))


def test_plan_carries_the_user_flags(tmp_path):
    req = LaunchRequest(run_id="r", run_dir=tmp_path, target=Target("t.py"), hosts=(("node1", 2), ("node2", 1)),
                        master_port=29512, include="node1:0,1@node2:1", launcher_args=("-R", "ssh"),
                        runner=RunnerFlags(no_python=True))
    plan = build_plan(req)
    assert "--include=node1:0,1@node2:1" in plan.argv and "--launcher_args=-R ssh" in plan.argv
    assert plan.argv.index("--no_python") < plan.argv.index("t.py")
    hostfile = next(f for f in plan.files if f.path.name == "hostfile")
    assert hostfile.text == "node1 slots=2\nnode2 slots=2\n"  # slot 1 of node2 exists for --include to pick
    env = next(f for f in plan.files if f.path.name == "ds_env").text
    assert "TORCH_FR_BUFFER_SIZE=2000" in env and f"TORCH_FR_DUMP_TEMP_FILE={tmp_path}/nccl_trace/rank_" in env
    # torch warns on every rank when a deprecated name is set, even beside the new one
    assert "TORCH_NCCL_TRACE_BUFFER_SIZE" not in env and "TORCH_NCCL_DEBUG_INFO_TEMP_FILE" not in env


def test_flight_recorder_names_follow_the_ranks_torch(tmp_path):
    from dscluster.launcher.plan import flight_recorder_env

    new, old = flight_recorder_env(tmp_path, "2.13.0+cpu"), flight_recorder_env(tmp_path, "2.5.1+cu124")
    assert new["TORCH_FR_BUFFER_SIZE"] == old["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "2000"
    assert new["TORCH_FR_DUMP_TEMP_FILE"] == old["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] == f"{tmp_path}/nccl_trace/rank_"
    assert not any(k.startswith("TORCH_FR_") for k in old) and "TORCH_NCCL_TRACE_BUFFER_SIZE" not in new


@pytest.mark.parametrize("argv, flag", [
    (["--elastic_training"], "--elastic_training"),
    (["--no_ssh"], "--no_ssh"),
    (["--node_rank", "1"], "--node_rank"),
    (["--launcher", "slurm"], "--launcher"),
    (["--launcher", "foo"], "--launcher"),
    (["--master_port", "70000"], "--master_port"),
    (["--launcher_args", "'unclosed"], "--launcher_args"),
    (["--force_multi", "--local", "1"], "--force_multi"),
])
def test_refused_flags_start_nothing(argv, flag, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_SHARED", str(tmp_path / "shared"))
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    base = [] if "--local" in argv else ["--local", "1"]
    assert cli.main(["launch", *base, *argv, "--detach", str(script)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert flag in err and "fix:" in err and "Traceback" not in err
    assert not (tmp_path / "shared").exists() or not list((tmp_path / "shared").rglob("run.json"))


def test_a_bad_number_names_its_flag(capsys):
    with pytest.raises(SystemExit):
        cli.main(["launch", "--num_gpus", "two", "t.py"])
    assert "--num_gpus" in capsys.readouterr().err


# ---- parity with DeepSpeed's own runner (issue 31) -------------------------------------------------
def _deepspeeds_runner_parser():
    """DeepSpeed's runner's own argument parser, as its parse_args builds it (never run: parse_args is
    caught the moment it would parse)."""
    import argparse

    runner = pytest.importorskip("deepspeed.launcher.runner")
    built = {}

    def catch(self, *args, **kwargs):
        built["parser"] = self
        raise SystemExit(0)

    orig = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = catch
    try:
        with pytest.raises(SystemExit):
            runner.parse_args([])
    finally:
        argparse.ArgumentParser.parse_args = orig
    return built["parser"]


def _launch_parser():
    import argparse

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["launch"]


def test_every_flag_of_deepspeeds_runner_is_accepted_or_refused_with_its_reason():
    """A flag a new DeepSpeed adds cannot slip by: each option string of its runner's parser is one of
    launch's options (passed through, turned into the plan, or refused with a reason)."""
    from dscluster.launcher.runnerflags import REFUSED

    ours = _launch_parser()._option_string_actions
    theirs = [o for a in _deepspeeds_runner_parser()._actions for o in a.option_strings if o not in ("-h", "--help")]
    assert len(theirs) > 25
    missing = [o for o in theirs if o not in ours]
    assert not missing, f"DeepSpeed runner flags dscluster launch does not know: {missing}"
    for flag in REFUSED:  # every refusal names a reason and a fix
        assert flag in theirs or flag in ("--elastic_training", "--min_elastic_nodes", "--max_elastic_nodes")


def test_pass_through_flags_reach_the_runner(dscluster_home, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    assert cli.main(["launch", "--local", "2", "--dry-run", "--bind_cores_to_rank", "--bind_core_list", "0-3",
                     "--log_level", "debug", "-q", str(script)]) == ExitCode.OK
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "deepspeed.launcher.runner" in x)
    for word in ("--bind_cores_to_rank", "--bind_core_list=0-3", "--log_level=debug", "--quiet"):
        assert word in line
    assert line.index("--quiet") < line.index(str(script))


def test_launcher_args_are_taken_whole(dscluster_home, tmp_path, monkeypatch):
    """`-mca ...` is one value of --launcher_args (launch's own `-m` must not take it), as DeepSpeed takes it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    args = cli.build_parser().parse_args(["launch", "--local", "1", "--launcher_args", "-mca btl_tcp_if_include eth1",
                                          "t.py", "--lr", "1"])
    assert args.launcher_args == "-mca btl_tcp_if_include eth1" and not args.module
    assert args.command == ["t.py", "--lr", "1"]
    req = LaunchRequest(run_id="r", run_dir=tmp_path, target=Target("t.py"), hosts=(("node1", 1), ("node2", 1)),
                        master_port=29512, launcher="openmpi", launcher_args=("-mca", "btl_tcp_if_include", "eth1"))
    assert "--launcher_args=-mca btl_tcp_if_include eth1" in build_plan(req).argv


def test_a_slot_named_twice_is_selected_once():
    sel = select(HOSTS, RunnerFlags(include="node1:1,1"))
    assert sel.hosts == (("node1", 1),) and sel.include_arg() == "node1:1"


def test_openmpi_single_slots_refused_up_front_whole_hosts_through_the_hostfile(dscluster_home, tmp_path, monkeypatch):
    from dscluster.cluster.spec import ClusterSpec, NodeSpec
    from dscluster.runs.preparing import prepare as prep_mod
    from dscluster.runs.records import request as opts_mod

    monkeypatch.setenv("HOME", str(tmp_path))
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    spec = ClusterSpec(name="c", nodes=(NodeSpec("10.9.0.1", 2, "node1"), NodeSpec("10.9.0.2", 2, "node2")),
                       shared_dir=tmp_path / "shared", ssh_user="root", launcher="openmpi")
    monkeypatch.setattr("dscluster.runs.supervising.nodes.transport_env", lambda *a, **k: {})
    base = dict(command=[str(script)], cluster_spec=spec, launcher="openmpi", cwd=str(tmp_path), skip_doctor=True)
    with pytest.raises(UsageError) as err:
        prep_mod.prepare(opts_mod.RunRequest.of(**base, runner=RunnerFlags(exclude="node2:0")), dry_run=True)
    assert err.value.setting == "--exclude" and "OpenMPI" in err.value.message
    rec = prep_mod.prepare(opts_mod.RunRequest.of(**base, runner=RunnerFlags(exclude="node2")), dry_run=True).record
    assert rec.launch.hosts == (("node1", 2),) and rec.launch.include is None


def test_slurm_include_becomes_slurms_node_selection(dscluster_home, tmp_path, monkeypatch):
    from dscluster.launcher import backends
    from dscluster.launcher.backends.slurm.clients import SlurmAsk, ask_args
    from dscluster.runs.records import request as opts_mod

    slurm = backends.get("slurm")
    opts = opts_mod.RunRequest.of(command=["t.py"], launcher="slurm", runner=RunnerFlags(include="n1@n3"))
    ask = slurm.request(opts, None)
    assert ask.nodes == 2 and "--nodelist=n1,n3" in ask_args(ask)
    ask = slurm.request(opts_mod.RunRequest.of(command=["t.py"], launcher="slurm",
                                               runner=RunnerFlags(exclude="n2", num_gpus=2)), None)
    assert "--exclude=n2" in ask_args(ask) and ask.tasks_per_node == 2
    with pytest.raises(UsageError, match="whole nodes"):
        slurm.request(opts_mod.RunRequest.of(command=["t.py"], launcher="slurm",
                                             runner=RunnerFlags(include="n1:0")), None)
    with pytest.raises(UsageError, match="disagree"):
        slurm.check_request(opts_mod.RunRequest.of(command=["t.py"], launcher="slurm",
                                                   runner=RunnerFlags(num_nodes=3),
                                                   scheduler=SlurmAsk(nodes=2, tasks_per_node=0)))


def test_deepspeed_env_files_reach_the_ranks_and_are_recorded(dscluster_home, tmp_path, monkeypatch):
    from dscluster.launcher.plan import RANK_HOOK
    from dscluster.runs.preparing.prepare import dry_run_text, prepare
    from dscluster.runs.records.request import RunRequest

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DS_ENV_FILE", raising=False)
    (home / ".deepspeed_env").write_text("PYTHONPATH=/home/lib\nFOO=home\n")
    (work / ".deepspeed_env").write_text("FOO=work\n\nHF_TOKEN=hf_secret\n")
    (work / "t.py").write_text("print(1)\n")
    prep = prepare(RunRequest.of(command=["t.py"], local=1, cwd=str(work), env=["BAR=1"]), dry_run=True)
    rec = prep.record
    assert rec.deepspeed_env == {"files": [str(home / ".deepspeed_env"), str(work / ".deepspeed_env")],
                                 "names": ["FOO", "HF_TOKEN", "PYTHONPATH"]}
    assert rec.launch.env["PYTHONPATH"] == "/home/lib" and rec.launch.env["FOO"] == "work"
    assert prep.secrets == {"HF_TOKEN": "hf_secret"} and "hf_secret" not in json.dumps(rec.to_json())
    text = dry_run_text(prep)
    # The rank hook (launcher/progress.py) first, the user's own path kept after it.
    assert f"PYTHONPATH={RANK_HOOK}:/home/lib\n" in text and "hf_secret" not in text
    (work / ".deepspeed_env").write_text("just words\n")
    with pytest.raises(ConfigError, match="line 1"):
        prepare(RunRequest.of(command=["t.py"], local=1, cwd=str(work)), dry_run=True)

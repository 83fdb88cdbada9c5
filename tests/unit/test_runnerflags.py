"""DeepSpeed's runner flags on `dscluster launch`: the same selection as DeepSpeed's runner, each bad value
named with its flag and the fix, and nothing started."""

from __future__ import annotations

import pytest

from dscluster import cli
from dscluster.errors import ExitCode, UsageError
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
                        master_port=29512, include="node1:0,1@node2:1", launcher_args=("-R", "ssh"), no_python=True)
    plan = build_plan(req)
    assert "--include=node1:0,1@node2:1" in plan.argv and "--launcher_args=-R ssh" in plan.argv
    assert plan.argv.index("--no_python") < plan.argv.index("t.py")
    hostfile = next(f for f in plan.files if f.path.name == "hostfile")
    assert hostfile.text == "node1 slots=2\nnode2 slots=2\n"  # slot 1 of node2 exists for --include to pick
    env = next(f for f in plan.files if f.path.name == "ds_env").text
    assert "TORCH_NCCL_TRACE_BUFFER_SIZE=2000" in env and f"TORCH_FR_DUMP_TEMP_FILE={tmp_path}/nccl_trace/rank_" in env


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

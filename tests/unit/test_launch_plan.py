"""The pure argv/env builder for DeepSpeed's runner (launch/plan.py)."""

from pathlib import Path

import pytest

from dscluster.errors import UsageError
from dscluster.launcher.plan import LaunchRequest, Target, build_plan, hostfile_text, rank_nodes
from dscluster.launcher.runnerflags import RunnerFlags
from dscluster.runs.preparing.program import find_ds_config, parse_env

RUN = Path("/shared/runs/r1")


def req(**kw):
    base = dict(run_id="r1", run_dir=RUN, target=Target("train.py", False, ("--steps", "5")),
                hosts=(("node0", 1), ("node1", 2)), master_port=31234, python="/opt/venv/bin/python",
                base_env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "DEEPSPEED_TIMEOUT": "5",
                          "HOME": "/root", "RANDOM_OTHER": "x"},
                transport_env={"PDSH_SSH_ARGS_APPEND": "-F /c/ssh_config"})
    base.update(kw)
    return LaunchRequest(**base)


def env_file(plan):
    f = next(f for f in plan.files if f.path.name == "ds_env")
    return f.text


def test_pdsh_argv_has_master_port_hostfile_and_rank_logs():
    plan = build_plan(req())
    a = plan.argv
    # Safe-path mode: the runner starts in the user's (node-writable) directory but never imports from it.
    assert a[:5] == ["/opt/venv/bin/python", "-u", "-P", "-m", "deepspeed.launcher.runner"]
    assert f"--hostfile={RUN / 'hostfile'}" in a
    assert "--master_addr=node0" in a and "--master_port=31234" in a and "--launcher=pdsh" in a
    assert f"--enable_each_rank_log={RUN / 'logs'}" in a
    assert "--force_multi" not in a  # two hosts: the runner goes multi-node by itself
    # launcher flags come before the script; the script's own args after it, untouched
    assert a[-3:] == ["train.py", "--steps", "5"]
    assert plan.world_size == 3 and plan.rank_nodes == ("node0", "node1", "node1")
    assert plan.env["DS_ENV_FILE"] == str(RUN / "ds_env")
    assert plan.env["PDSH_SSH_ARGS_APPEND"] == "-F /c/ssh_config"
    hostfile = next(f for f in plan.files if f.path.name == "hostfile")
    assert hostfile.text == "node0 slots=1\nnode1 slots=2\n"


def test_env_file_carries_path_first_python_bin_and_no_blank_or_comment_lines():
    text = env_file(build_plan(req(user_env={"OMP_NUM_THREADS": "2"})))
    lines = text.splitlines()
    assert all(line and not line.startswith("#") and "=" in line for line in lines)
    env = dict(line.split("=", 1) for line in lines)
    assert env["PATH"].split(":")[0] == "/opt/venv/bin"
    assert env["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64" and env["DEEPSPEED_TIMEOUT"] == "5"
    assert env["DSCLUSTER_RUN_ID"] == "r1" and env["DSCLUSTER_RUN_DIR"] == str(RUN)
    assert env["OMP_NUM_THREADS"] == "2"
    assert "RANDOM_OTHER" not in env and "HOME" not in env


def test_secrets_never_reach_argv_or_env_file():
    plan = build_plan(req(user_env={"HF_TOKEN": "hf_secret", "A": "b"}))
    assert "hf_secret" not in " ".join(plan.argv) and "hf_secret" not in env_file(plan)
    script = next(f for f in plan.files if f.secret)
    assert script.mode == 0o600 and "export HF_TOKEN=hf_secret" in script.text
    assert f"--venv_script={script.path}" in plan.argv
    assert "hf_secret" not in str(plan.shown_files())
    assert "HF_TOKEN" not in plan.env  # pdsh: only the remote shell sources it


def test_single_remote_host_forces_multi_node_path():
    plan = build_plan(req(hosts=(("node1", 2),)))
    assert "--force_multi" in plan.argv and plan.master_addr == "node1"


def test_openmpi_as_root_and_secret_forwarding_by_name():
    plan = build_plan(req(launcher="openmpi", is_root=True, user_env={"WANDB_API_KEY": "k"},
                          network_interface="eth1"))
    la = [a for a in plan.argv if a.startswith("--launcher_args=")]
    assert la == ["--launcher_args=--allow-run-as-root --mca btl_tcp_if_include eth1 -x WANDB_API_KEY"]
    assert "--launcher=openmpi" in plan.argv and plan.env["WANDB_API_KEY"] == "k"
    assert not any(a.startswith("--enable_each_rank_log") for a in plan.argv)
    assert not any(a.startswith("--launcher_args") for a in build_plan(req(launcher="openmpi")).argv)


def test_module_target_and_local_run():
    plan = build_plan(req(hosts=(), launcher="local", local_procs=2, target=Target("dscluster.train", True, ())))
    assert "--module" in plan.argv and plan.argv[-1] == "dscluster.train"
    assert plan.argv.index("--module") < plan.argv.index("dscluster.train")
    assert "--devices=0,1" in plan.argv and not any(a.startswith("--hostfile") for a in plan.argv)
    assert plan.env["DSCLUSTER_RUN_ID"] == "r1" and plan.env["PATH"].startswith("/opt/venv/bin")
    assert plan.world_size == 2 and plan.rank_nodes == ("localhost", "localhost")


def test_a_local_run_starts_its_ranks_without_deepspeeds_runner():
    """On one machine the ranks start from launcher/locallaunch.py (no torch import before theirs);
    --include picks the devices; a core-binding flag keeps DeepSpeed's runner and its launch.py."""
    plan = build_plan(req(hosts=(), launcher="local", local_procs=2))
    assert plan.argv[:5] == ["/opt/venv/bin/python", "-u", "-P", "-m", "dscluster.launcher.locallaunch"]
    assert "deepspeed.launcher.runner" not in plan.argv and f"--enable_each_rank_log={RUN / 'logs'}" in plan.argv
    picked = build_plan(req(hosts=(), launcher="local", local_procs=2, include="localhost:1,3"))
    assert "--devices=1,3" in picked.argv
    assert "--cache_bytecode" in plan.argv  # the ranks' bytecode cache where torch's would be lost
    own = build_plan(req(hosts=(), launcher="local", local_procs=2, user_env={"PYTHONDONTWRITEBYTECODE": "1"}))
    assert "--cache_bytecode" not in own.argv  # the user's --env decides about bytecode
    bound = build_plan(req(hosts=(), launcher="local", local_procs=2, runner=RunnerFlags(passed=("--bind_cores_to_rank",))))
    assert "deepspeed.launcher.runner" in bound.argv and "--num_gpus=2" in bound.argv


def test_bad_launcher_is_refused():
    with pytest.raises(ValueError):
        build_plan(req(launcher="slurm"))


def test_helpers():
    assert hostfile_text((("a", 8),)) == "a slots=8\n"
    assert rank_nodes((("a", 1), ("b", 2))) == ("a", "b", "b")
    assert find_ds_config(["--deepspeed", "--deepspeed_config", "ds.json"]) == "ds.json"
    assert find_ds_config(["--deepspeed_config=x.json"]) == "x.json"
    assert find_ds_config(["--steps", "3"]) is None
    assert parse_env(["A=1", "B=x=y"]) == {"A": "1", "B": "x=y"}
    for bad in ("DSCLUSTER_SURELY_UNSET", "=v", "1A=2", "A B=1", "É=1"):
        with pytest.raises(UsageError):
            parse_env([bad])


def test_env_name_alone_takes_the_value_from_this_environment(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    assert parse_env(["HF_TOKEN", "A=1"]) == {"HF_TOKEN": "hf_from_env", "A": "1"}
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(UsageError, match="HF_TOKEN is not set") as err:
        parse_env(["HF_TOKEN"])
    assert "export HF_TOKEN" in err.value.hint

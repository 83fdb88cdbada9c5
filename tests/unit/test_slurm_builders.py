"""Pure parts of the Slurm support: slurm.conf of the simulated cluster, the srun/salloc/sbatch argv and
script, the rank shim's environment, and what Slurm's clients print."""

import shlex
from pathlib import Path

import pytest

from dscluster.errors import UsageError
from dscluster.launcher.backends.slurm import SRUN_RANK
from dscluster.launcher.backends.slurm import clients as slurm
from dscluster.launcher.backends.slurm.srun_rank import rank_env, tasks_on_this_node
from dscluster.launcher.plan import LaunchRequest, Target, build_plan
from dscluster.sim.slurm import SlurmLayout, SlurmNode, slurm_conf_text

RUN = Path("/shared/runs/r1")


def layout(gpus: int = 0) -> SlurmLayout:
    nodes = tuple(SlurmNode(f"node{i}", f"10.1.2.{10 + i}", 4, gpus) for i in range(3))
    return SlurmLayout(cluster="dsc-t", controller=nodes[0], nodes=nodes, state_dir=Path("/run/x/slurm"),
                       log_dir=Path("/logs"), munge_socket=Path("/run/x/slurm/munge/munge.socket"))


def conf(text: str) -> dict[str, str]:
    return {ln.split("=", 1)[0]: ln.split("=", 1)[1] for ln in text.splitlines()
            if "=" in ln and not ln.startswith(("#", "NodeName", "PartitionName"))}


def test_slurm_conf_names_every_node_with_its_own_address_and_one_partition_over_all():
    text = slurm_conf_text(layout())
    c = conf(text)
    assert c["SlurmctldHost"] == "node0(10.1.2.10)"
    assert c["ProctrackType"] == "proctrack/linuxproc" and c["TaskPlugin"] == "task/none"
    assert c["SelectType"] == "select/cons_tres"
    assert c["AuthInfo"] == "socket=/run/x/slurm/munge/munge.socket"  # this cluster's munged, not /run/munge
    assert c["SlurmdSpoolDir"] == "/run/x/slurm/spool/%n"
    nodes = [ln for ln in text.splitlines() if ln.startswith("NodeName=")]
    assert nodes == [f"NodeName=node{i} NodeAddr=10.1.2.{10 + i} NodeHostname=node{i} CPUs=4 State=UNKNOWN"
                     for i in range(3)]
    part = next(ln for ln in text.splitlines() if ln.startswith("PartitionName="))
    assert "Nodes=node0,node1,node2" in part and "Default=YES" in part
    assert "GresTypes" not in c
    assert slurm_conf_text(layout()) == text  # pure


def test_slurm_conf_declares_gpus_as_gres():
    text = slurm_conf_text(layout(gpus=8))
    assert "GresTypes=gpu" in text and "Gres=gpu:8" in text


@pytest.mark.parametrize("text,seconds", [("30", 1800), ("0:45", 45), ("2:00:00", 7200), ("1-12", 129600),
                                          ("1-0:30", 86400 + 1800), (None, None), ("UNLIMITED", None)])
def test_time_limits_in_slurms_format(text, seconds):
    assert slurm.time_seconds(text) == seconds


def test_a_bad_time_limit_or_ask_names_the_setting():
    with pytest.raises(UsageError) as err:
        slurm.time_seconds("an hour")
    assert err.value.setting == "time"
    with pytest.raises(UsageError):
        slurm.check_ask(slurm.SlurmAsk(nodes=0))
    with pytest.raises(UsageError):
        slurm.check_ask(slurm.SlurmAsk(partition="gpu; rm -rf /"))


def test_salloc_and_sbatch_ask_for_the_same_resources():
    ask = slurm.SlurmAsk(nodes=2, tasks_per_node=8, partition="gpu", gpus_per_node=8, time="2:00:00")
    argv = slurm.salloc_argv(ask, "r1")
    assert argv[:3] == ["salloc", "--no-shell", "--job-name=dsc-r1"]
    assert argv[3:] == ["--nodes=2", "--ntasks-per-node=8", "--partition=gpu", "--gpus-per-node=8", "--time=2:00:00"]
    private = Path("/home/u/.dscluster/slurm-jobs/r1")
    script = slurm.sbatch_script(run_id="r1", ask=ask, python="/opt/venv/bin/python", run_dir=RUN, env={},
                                 supervisor="dscluster.runs.supervising.supervisor", private_dir=private)
    lines = script.splitlines()
    assert lines[0] == "#!/bin/sh"
    assert [ln for ln in lines if ln.startswith("#SBATCH --")][1:6] == [f"#SBATCH {a}" for a in argv[3:]]
    # isolated (nothing imported from the job's cwd); hand-off and output outside the node-writable run dir
    assert lines[-1] == ("exec /opt/venv/bin/python -I -m dscluster.runs.supervising.supervisor --handoff "
                         "/home/u/.dscluster/slurm-jobs/r1/handoff.json /shared/runs/r1")
    assert f"#SBATCH --output={private}/sbatch.log" in lines and "/shared/runs/r1/logs" not in script


def test_srun_through_deepspeeds_slurm_runner():
    plan = build_plan(LaunchRequest(run_id="r1", run_dir=RUN, target=Target("dscluster.train", True, ("--steps", "5")),
                                    hosts=(("node0", 2), ("node1", 2)), master_port=31234, launcher="slurm",
                                    python="/opt/venv/bin/python", base_env={"PATH": "/usr/bin"},
                                    user_env={"HF_TOKEN": "s3cret", "A": "1"}, attempt=2))
    a = plan.argv
    assert "--launcher=slurm" in a and "--master_addr=node0" in a
    launcher_args = shlex.split(next(x for x in a if x.startswith("--launcher_args=")).split("=", 1)[1])
    assert launcher_args == ["--kill-on-bad-exit=1", "--job-name=dsc-r1-a2", "--nodes=2", "--ntasks-per-node=2",
                             f"--output={RUN / 'logs'}/train_rank%t.log", "--unbuffered"]
    # SlurmRunner runs `python -u SCRIPT ARGS`: the shim is the script, the module and its args follow it (through
    # the secret mask of launcher/masklog.py: the run has a secret).
    assert a[-7:] == [str(SRUN_RANK), "--module", "dscluster.launcher.masklog", "module", "dscluster.train", "--steps",
                      "5"]
    assert "--module" not in a[: a.index(str(SRUN_RANK))]
    env_file = next(f for f in plan.files if f.path.name == "ds_env").text
    assert "DSCLUSTER_MASTER_ADDR=node0" in env_file and "DSCLUSTER_MASTER_PORT=31234" in env_file
    assert "s3cret" not in " ".join(a) + env_file  # secrets travel in srun's environment only
    assert plan.env["HF_TOKEN"] == "s3cret"
    assert plan.world_size == 4


def test_the_rank_shim_maps_slurms_task_variables():
    env = {"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "1", "SLURM_NODEID": "2", "SLURM_NNODES": "3",
           "SLURM_TASKS_PER_NODE": "2(x3)", "DSCLUSTER_MASTER_ADDR": "node0", "DSCLUSTER_MASTER_PORT": "31234"}
    out = rank_env(env)
    assert out == {"RANK": "5", "WORLD_SIZE": "6", "LOCAL_RANK": "1", "LOCAL_SIZE": "2", "LOCAL_WORLD_SIZE": "2",
                   "CROSS_RANK": "2", "CROSS_SIZE": "3", "MASTER_ADDR": "node0", "MASTER_PORT": "31234"}
    assert tasks_on_this_node({"SLURM_TASKS_PER_NODE": "3,2(x2)", "SLURM_NODEID": "2"}) == 2
    with pytest.raises(SystemExit):
        rank_env({"DSCLUSTER_MASTER_ADDR": "x"})


def test_what_slurms_clients_print_is_parsed():
    assert slurm.parse_granted("salloc: Granted job allocation 42\nsalloc: Waiting") == "42"
    assert slurm.parse_granted("salloc: error: invalid partition") is None
    info = slurm.parse_show_job("JobId=7 JobName=dsc-r1 JobState=TIMEOUT Reason=TimeLimit TimeLimit=00:00:45 "
                                "NodeList=node[0-2]")
    assert info["JobState"] == "TIMEOUT" and info["NodeList"] == "node[0-2]" and slurm.timed_out(info)
    assert not slurm.timed_out({"JobState": "RUNNING", "Reason": "None"})
    assert slurm.parse_steps("7.0 dsc-r1-a1\n7.1 dsc-r1-a2\n8.0 other\n", "dsc-r1-a2") == ["7.1"]


def test_every_batch_job_of_a_home_gets_its_private_dir(dscluster_home):
    """The second `launch --sbatch` of a home found slurm-jobs/ there and failed with FileExistsError."""
    from dscluster.launcher.backends.slurm.batch import private_job_dir

    first, second = private_job_dir("r1"), private_job_dir("r2")
    assert first.parent == second.parent == dscluster_home / "slurm-jobs"
    assert all(p.is_dir() and p.stat().st_mode & 0o777 == 0o700 for p in (first, second, first.parent))

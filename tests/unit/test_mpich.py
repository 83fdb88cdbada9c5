"""The MPICH backend (launcher/backends/mpich.py) as a unit: its plan, its checks, its runner PATH and
the shim every rank runs through, read back by the supervisor's generic failure rules."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dscluster.cluster.spec import parse_spec
from dscluster.errors import UsageError
from dscluster.launcher import backends
from dscluster.launcher.backends import NodeTools, mpich
from dscluster.launcher.plan import LaunchRequest, Target, build_plan
from dscluster.launcher.runnerflags import RunnerFlags
from dscluster.runs.supervising.detect import FAILURE_LINE, RANK_OK, launcher_failure


def request(hosts=(("node1", 2), ("node2", 2)), user_env=None, **kw) -> LaunchRequest:
    return LaunchRequest(run_id="r-1", run_dir=Path("/shared/runs/r-1"), target=Target("dscluster.train", True, ("--x",)),
                         hosts=hosts, master_port=29600, launcher="mpich", python="/opt/venv/bin/python",
                         user_env={"HF_TOKEN": "s3cret"} if user_env is None else user_env, **kw)


def test_the_plan_runs_every_rank_through_the_shim_and_keeps_secrets_off_the_command_line():
    plan = build_plan(request())
    argv = plan.argv
    assert "--launcher=mpich" in argv and "s3cret" not in " ".join(argv)
    # Hydra copies the secret's value from mpirun's environment, by name only; nothing else of it.
    assert "--launcher_args=-genvlist HF_TOKEN" in argv and plan.env["HF_TOKEN"] == "s3cret"
    shim = argv.index(str(mpich.SHIM))
    assert argv[shim + 1] == "--hosts=node1,node2" and argv[-2:] == ["dscluster.train", "--x"]
    assert build_plan(request(user_env={})).argv.count("--launcher_args=-genvnone") == 1
    # The user's own mpirun options follow dscluster's; --no_python and --no_local_rank reach the shim.
    argv = build_plan(request(user_env={}, launcher_args=("-verbose",), runner=RunnerFlags(no_python=True, no_local_rank=True))).argv
    assert "--launcher_args=-genvnone -verbose" in argv
    at = argv.index(str(mpich.SHIM))
    assert argv[at - 1] == "/opt/venv/bin/python" and {"--no_python", "--no_local_rank"} <= set(argv[at:])


def test_what_deepspeeds_mpich_runner_refuses_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="same slots on every host"):
        build_plan(request(hosts=(("node1", 2), ("node2", 1))))
    with pytest.raises(UsageError) as err:
        backends.get("mpich").check_selection("node1:0", "--include")
    assert "whole hosts" in err.value.hint


def test_doctor_asks_for_mpichs_programs_on_every_node():
    b = backends.get("mpich")
    assert set(b.node_tools) == {"mpirun.mpich", "hydra_pmi_proxy"}
    # Open MPI's mpirun alone is not MPICH.
    bad = b.check_tools(NodeTools("node0", True, {"mpirun": "/usr/bin/mpirun"}, {}))
    assert not bad.ok and "mpirun.mpich" in bad.finding and "apt-get install mpich on node0" in bad.fix
    assert not b.check_tools(NodeTools("node1", False, {"mpirun.mpich": "/usr/bin/mpirun.mpich"}, {})).ok
    assert b.check_tools(NodeTools("node1", False, {"hydra_pmi_proxy": "/usr/bin/hydra_pmi_proxy"}, {})).ok


@pytest.mark.skipif(not shutil.which("mpirun.mpich"), reason="needs Debian's mpich")
def test_the_runner_finds_mpichs_mpirun_first_whatever_the_alternatives_say(tmp_path):
    spec = parse_spec('[cluster]\nname = "lab"\nshared_dir = "/shared"\n[[nodes]]\naddress = "127.0.0.1"\nslots = 1\n')
    spec = dataclasses.replace(spec, state_dir=str(tmp_path / "state"))
    env = backends.get("mpich").transport_env(spec, ("-o", "ControlMaster=no"))
    first = Path(env["PATH"].split(os.pathsep)[0])
    assert first.parent == tmp_path / "state" and env["HYDRA_LAUNCHER_EXTRA_ARGS"] == "-o ControlMaster=no"
    assert env[mpich.LOCALHOST_VAR] == "127.0.0.1"
    found = shutil.which("mpirun", path=env["PATH"])
    assert found == str(first / "mpirun")
    out = subprocess.run([found, "-info"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PATH": env["PATH"]})
    assert "HYDRA build details" in out.stdout, out.stdout + out.stderr


def test_the_shim_reports_each_ranks_end_in_the_words_the_supervisor_reads(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text("import os, signal, sys\nprint(sys.argv[1:], flush=True)\n"
                      "os.kill(os.getpid(), signal.SIGKILL) if sys.argv[1] == 'die' else sys.exit(0)\n")
    env = {**os.environ, "PMI_RANK": "3", "MPI_LOCALRANKID": "1", "LOCAL_SIZE": "2"}

    def rank(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(mpich.SHIM), "--hosts=node1,node2", str(script), *args],
                              capture_output=True, text=True, timeout=120, env=env)

    ok = rank("fine")
    assert ok.returncode == 0 and "['fine', '--local_rank=1']" in ok.stdout
    assert RANK_OK.search(ok.stdout) and not FAILURE_LINE.search(ok.stdout) and "node2: rank 3: " in ok.stdout
    died = rank("die")
    assert died.returncode == 137 and "node2: rank 3: exits with return code = -9" in died.stdout
    failure = launcher_failure(died.stdout, ["node1", "node2"], {"node2": "node2"})
    assert failure and failure.node == "node2"

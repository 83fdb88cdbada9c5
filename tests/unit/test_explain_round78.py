"""Round 78's rule (issue 45), from threads about the `deepspeed` launcher across nodes and the launchers around it
(DeepSpeed's MPI discovery, gpt-neox's MPI/Slurm launch, Determined's, itwinai's and ms-swift's): DeepSpeed's own
`hostname -I`, which its MPI discovery (init_distributed started without a launcher that sets the ranks) and its elastic
agent run to find the master address, failing on a host whose hostname program has no -I option. A second wording of
each form, in another DeepSpeed release's or another caller's words than the corpus cases it was written from, and near
misses that must not be read as it: DeepSpeed's runner's own `ssh HOST hostname -I` and ssh check (the first host out of
reach), `hostname -i` (lower case: a name that does not resolve), a `hostname -I` killed by a signal, and a launch
script's own `hostname -I` outside DeepSpeed's MPI discovery."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-mpi-discovery-hostname",)


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed 0.15.2-0.16.3 (comm.py mpi_discovery after deepspeedai/DeepSpeed#6498: shlex.split("hostname -I"), no
    # shell), so CalledProcessError lists the command's two words; the frames as that release prints them
    ("  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py\", line 708, in mpi_discovery\n"
     "    result = subprocess.check_output(hostname_cmd)\n"
     "  File \"/opt/conda/lib/python3.10/subprocess.py\", line 421, in check_output\n"
     "    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,\n"
     "  File \"/opt/conda/lib/python3.10/subprocess.py\", line 526, in run\n"
     "    raise CalledProcessError(retcode, process.args,\n"
     "subprocess.CalledProcessError: Command '['hostname', '-I']' returned non-zero exit status 1.\n",
     "ds-mpi-discovery-hostname"),
    # OptimalScale/LMFlow#64 (macOS, DeepSpeed 0.8): BSD hostname's own words for the option, after DeepSpeed's
    # MPI-discovery line, then the traceback the stored text cuts
    ("[2023-04-02 18:56:51,278] [INFO] [comm.py:634:init_distributed] Not using the DeepSpeed or dist launchers, "
     "attempting to detect MPI environment...\n"
     "hostname: illegal option -- I\n"
     "usage: hostname [-fs] [name-of-host]\n"
     "Traceback (most recent call last):\n"
     "  File \"/Users/clark/Source/Github/LMFlow/service/app.py\", line 34, in <module>\n", "ds-mpi-discovery-hostname"),
    # deepspeedai/DeepSpeed#1937 (DeepSpeed 0.3.16 on Windows: cmd.exe finds no program "hostname -I"): the shell=True
    # form of the command
    ("subprocess.CalledProcessError: Command '['hostname -I']' returned non-zero exit status 1\n",
     "ds-mpi-discovery-hostname"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # DeepSpeed's runner (launcher/runner.py main) asking the first hostfile host for its address over ssh: the host
    # out of reach, not its hostname program
    ("subprocess.CalledProcessError: Command '['ssh', 'worker-1', 'hostname', '-I']' returned non-zero exit status "
     "255.\n", "ds-mpi-discovery-hostname"),
    # the runner's ssh check before it (deepspeedai/DeepSpeed#4907's words)
    ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned "
     "non-zero exit status 255.\n", "ds-mpi-discovery-hostname"),
    # the runner's own error when ssh FIRST_HOST hostname -I fails (runner.py logger.error)
    ("[2024-03-01 10:00:00,000] [ERROR] [runner.py:506:main] Unable to detect suitable master address via 'hostname "
     "-I', please manually specify one via --master_addr\n", "ds-mpi-discovery-hostname"),
    # deepspeedai/DeepSpeed#2837 (ALCF Polaris, mpich launch): hostname -I killed by a signal, its cause not established
    ("subprocess.CalledProcessError: Command '['hostname -I']' died with <Signals.SIGSEGV: 11>.\n",
     "ds-mpi-discovery-hostname"),
    # `hostname -i` (lower case: the name's resolved address) fails on a name that does not resolve
    ("subprocess.CalledProcessError: Command '['hostname', '-i']' returned non-zero exit status 1.\n",
     "ds-mpi-discovery-hostname"),
    # a launch script's own MASTER_ADDR=$(hostname -I | awk ...) on macOS, with no DeepSpeed MPI discovery before it
    ("hostname: illegal option -- I\nusage: hostname [-fs] [name-of-host]\n", "ds-mpi-discovery-hostname"),
    # GNU inetutils' words for another option, after DeepSpeed's MPI-discovery line
    ("[INFO] [comm.py:667:init_distributed] Not using the DeepSpeed or dist launchers, attempting to detect MPI "
     "environment...\nhostname: invalid option -- 'A'\n", "ds-mpi-discovery-hostname"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_runner_reaching_no_host_stays_ssh_unreachable():
    assert sig("subprocess.CalledProcessError: Command '['ssh', 'worker-1', 'hostname', '-I']' returned non-zero "
               "exit status 255.\n") != "ds-mpi-discovery-hostname"
    assert sig("Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.\n"
               "RuntimeError: Using hostfile at /job/hostfile but host=192.168.3.100 was not reachable via ssh.\n") \
        == "ssh-unreachable"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 18's rules (issue 45), sigtraining.py: ssh itself failing under a launcher's Python (an ssh command's
CalledProcessError with exit status 255, ssh-unreachable), Ray's memory monitor killing workers for host memory
(memcg-oom), NCCL's own WARN of a mismatched collective (collective-mismatch, also before torch's vague `invalid
usage`): a second wording of each, in another version's or another caller's words than the corpus case it was
written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed 0.14+'s runner: shlex's list, with --ssh_port (the cases were a string and a one-string list)
    ("Traceback (most recent call last):\n"
     "  File \"/opt/venv/lib/python3.10/site-packages/deepspeed/launcher/runner.py\", line 489, in main\n"
     "    subprocess.check_call(safe_ssh_cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
     "subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', '-p', '2222', 'worker-1', "
     "'hostname']' returned non-zero exit status 255.\n", "ssh-unreachable"),
    # an ssh given by its path, asked for the master address (`hostname -I`)
    ("subprocess.CalledProcessError: Command '['/usr/bin/ssh', 'gpu-node-03', 'hostname', '-I']' returned non-zero "
     "exit status 255.\n", "ssh-unreachable"),
    # Ray's OutOfMemoryError raised by ray.get (the case was the raylet's summary line)
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
     "Memory on the node (IP: 10.0.62.231, ID: e5d953ef) where the task (task ID: 43534ce9, name=allocate_memory, "
     "pid=11362, memory used=1.25GB) was running was 14.67GB / 15.44GB (0.95015), which exceeds the memory usage "
     "threshold of 0.95. Ray killed this worker\n", "memcg-oom"),
    # NCCL's WARN behind its host prefix, then torch's vague error for the same call (the case was the WARN alone)
    ("node7:2211:2290 [3] NCCL WARN Mismatched collective detected, please check your collective "
     "calls at and around rank 3. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs\n"
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with "
     "NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n", "collective-mismatch"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # ssh ran and the remote command failed: its own exit status, not ssh's
    ("subprocess.CalledProcessError: Command '['ssh', 'node2', 'ls /data/shards']' returned non-zero exit status 2.\n",
     "ssh-unreachable"),
    # another program whose name begins with ssh
    ("subprocess.CalledProcessError: Command '['sshfs', 'node2:/data', '/mnt/data']' returned non-zero exit status "
     "255.\n", "ssh-unreachable"),
    # Ray's dead actor lists three possible causes, the OOM killer only one of them
    ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
     "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. "
     "(1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. "
     "(3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.\n", "memcg-oom"),
    # torch's vague NCCL invalid usage without NCCL's own warning names no mismatch
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with "
     "NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n", "collective-mismatch"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_ssh_answer_names_the_key_and_the_ray_answer_host_memory():
    ssh = explain.explain("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no node1 hostname' "
                          "returned non-zero exit status 255.\n")
    assert "passwordless ssh" in ssh.cause and "255" in ssh.cause and "ssh-copy-id" in ssh.fix
    ray = explain.explain("(raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure "
                          "(OOM), 0 Workers crashed due to other reasons at node\n")
    assert ray.signature == "memcg-oom" and "not GPU memory" in ray.cause and ray.restart_can_help is False

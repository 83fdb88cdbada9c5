"""Round 26's rules (issue 45), multi-node GPU jobs in the words of their communication stack and scheduler
(signccl.py, sigdevices.py, the scheduler backend's table): Open MPI's TCP transport off the nodes' shared network,
Open MPI direct-launched without the scheduler's PMI, the MPI launcher running a host list as the program, NCCL's NVLS
multicast failing, nccl-tests' quoted 'system not yet initialized', the scheduler's options refused together and its
lost batch script: a second wording of each, in another version's or another caller's words than the corpus case it
was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.signccl import CCL_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # oob_tcp's twin of the btl warning, with subnet-matching's message (the case was btl_tcp's "Unknown interface")
    ("WARNING: An invalid value was given for oob_tcp_if_include.  This\nvalue will be ignored.\n\n"
     "  Local host: gpu-07\n  Value:      10.1.0.0/16\n  Message:    Did not find interface matching this subnet\n",
     "mpi-tcp-interface"),
    # the endpoint's complaint as Open MPI 3.1 prints it, tagged by rank (the case was 4.0's, untagged)
    ("[1,3]<stderr>:[node2][[4113,1],3][btl_tcp_endpoint.c:742:mca_btl_tcp_endpoint_recv_connect_ack] received "
     "unexpected process identifier [[4113,1],0]\n", "mpi-tcp-interface"),
    # the PMI help text from a direct launch under another scheduler's name and line breaks
    ("The application appears to have been direct launched using \"aprun\",\nbut OMPI was not built with ALPS's "
     "PMI support and therefore cannot\nexecute.\n", "mpi-pmi-unsupported"),
    # the launcher's message with its Executable line naming the host list (the case's log was cut before it)
    ("--------------------------------------------------------------------------\n"
     "mpirun was unable to find the specified executable file, and therefore\ndid not launch the job.\n\n"
     "Node:       gpu01\nExecutable: gpu01:4,gpu02:4\n", "launcher-argument-as-program"),
    # NCCL 2.2x's own words for the same multicast failure (the case was nvls.cc's Cuda failure line)
    ("ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nFailed to bind NVLink SHARP (NVLS) "
     "Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.\n",
     "nvls-multicast"),
    # NCCL's own CUDACHECK quoting the same string (the case was nccl-tests')
    ("node3:412:412 [0] init.cc:1735 NCCL WARN Cuda failure 'system not yet initialized'\n", "fabric-manager"),
    # srun's other mutually exclusive memory options (the case was the GPU options)
    ("srun: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.\n",
     "slurm-request-invalid"),
    # slurmstepd named with its node, a spool under /var (the case's was under /tmp)
    ("slurmstepd-gpu12: error: execve(): /var/spool/slurmd/job123456/slurm_script: No such file or directory\n",
     "slurm-node-fault"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # Open MPI's interface listing at verbose level, and a peer it could not reach: no wrong interface named
    ("[node1] btl: tcp: Using interface: eth0\n", "mpi-tcp-interface"),
    ("At least one pair of MPI processes are unable to reach each other for\nMPI communications.\n",
     "mpi-tcp-interface"),
    # the launcher not finding a real program: still the script (or program) missing
    ("mpirun was unable to find the specified executable file, and therefore\ndid not launch the job.\n\n"
     "Node:       gpu01\nExecutable: train.py\n", "launcher-argument-as-program"),
    # a host list given with its option, then a program the node lacks
    ("$ mpirun -np 4 -H a:2,b:2 ./bench\nmpirun was unable to find the specified executable file\n",
     "launcher-argument-as-program"),
    # NCCL's NVLS support line and a CUDA failure in another transport
    ("node1:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0\n", "nvls-multicast"),
    ("node1:1:1 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'\n", "nvls-multicast"),
    # a step's own option refused (no "mutually exclusive"), and a job script that is missing on the submit host
    ("srun: fatal: Invalid numeric value \"x\" for --ntasks.\n", "slurm-request-invalid"),
    ("sbatch: error: Unable to open file train.sh\n", "slurm-node-fault"),
    # a program the batch script runs that is missing: the launcher's own words, not the node's spool
    ("slurmstepd: error: execve(): python3: No such file or directory\n", "slurm-node-fault"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("ssh: connect to host 10.0.0.2 port 50000: Connection refused\n") == "ssh-unreachable"
    assert sig("RuntimeError: CUDA error: system not yet initialized\n") == "fabric-manager"
    assert sig("sbatch: error: Batch job submission failed: Requested node configuration is not available\n") == \
        "slurm-request-invalid"
    zh = FAILURES_ZH
    named = {s.name: s for s in explain.SIGNATURES}
    for s in (*CCL_SIGNATURES, named["slurm-node-fault"], named["slurm-request-invalid"]):
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name

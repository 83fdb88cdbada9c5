"""The precedence explain.py's docstring writes down: a specific cause beats a generic one; dscluster's own
`error:`/`fix:` lines are recognised by their exact form, a script's `PROG.py: error:` is argparse's."""

from __future__ import annotations

import pytest

from dscluster import explain

USAGE = ("usage: train.py [-h] --lr LR\n"
         "train.py: error: argument --lr: invalid float value: 'x'\n")

CASES = {
    # dscluster's own verdict, in its exact forms (bare, per rank, behind pdsh's prefix with its fix line)
    "own error and fix": ("error: data directory /d does not exist\n  fix: prepare it first\n", "program-error"),
    "own error, rank prefix": ("[rank 1] error: bad --data\n[rank 1]   fix: give a directory\n", "program-error"),
    "own error behind pdsh": ("node3: error: no hostfile\nnode3:   fix: write one\n", "program-error"),
    # a script's argparse error, with its usage line, behind prefixes, or alone (its usage line cut off)
    "argparse with usage": (USAGE, "argparse-usage"),
    "argparse behind pdsh": ("".join(f"w1: {ln}\n" for ln in USAGE.splitlines()), "argparse-usage"),
    "argparse, usage cut off": ("train.py: error: unrecognized arguments: --fp16\n", "argparse-usage"),
    "argparse --local_rank": ("usage: t.py [-h]\nt.py: error: unrecognized arguments: --local_rank=0\n",
                              "local-rank-arg"),
    # a specific cause beats a generic one
    "oom beats a peer's symptom": ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
                                   "[rank0]: RuntimeError: NCCL error: remote process exited\n", "cuda-oom"),
    "message beats the exception type": ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                                         "ModuleNotFoundError: No module named 'flash_attn'\n", "module-not-found"),
    "the lines before a vague error": ("NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with error 12\n"
                                       "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                                       "torch.distributed.DistBackendError: NCCL error: unhandled system error\n",
                                       "nccl-ib"),
    "a known exit code beats a kill word": ("['python3', '-u', '-m', 'dscluster.train', '--local_rank=0'] exits with "
                                            "return code = 3\nKilled by the operator\n", "input-error-exit"),
    # Another program's exit code has no meaning of ours: Slurm's execve failure exits 2, and names the cause.
    "an exit code alone is not a usage error": ("slurmstepd: error: execve(): torchrun: No such file or directory\n"
                                                "srun: error: g1: task 0: Exited with exit code 2\n", "launcher-missing"),
    "a rank's words beat the table's generic": ("Traceback (most recent call last):\n  File \"t.py\", line 9, in f\n"
                                                "KeyError: 'labels'\n", "python-error"),
    # Last resort (errorline.py): an OS error text in a rank's own error before its own words; over every line
    # where no rank has an error; then the log's first error line. Every specific signature beats them.
    "an OS text in a rank's error": ("Traceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n"
                                     "FileNotFoundError: [Errno 2] No such file or directory: 'run/hostfile'\n",
                                     "file-missing"),
    "an OS text anywhere": ("epoch 1\nrsync: /scratch/shard-7: Permission denied\nKilling subprocess 4\n",
                            "permission-denied"),
    "a specific cause beats an OS text": ("tee: /x/log: Permission denied\n[rank1]: torch.OutOfMemoryError: CUDA out "
                                          "of memory. Tried to allocate 2 GiB\n", "cuda-oom"),
    "a symptom beats the error line": ("Error: shard 3 is short\n['python', 't.py'] exits with return code = -9\n",
                                       "killed"),
    "the first error line, last of all": ("loading\nFATAL: shard 3 is short\nexits with return code = 1\n",
                                          "error-line"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_precedence(case):
    text, expected = CASES[case]
    found = explain.explain(text)
    assert found is not None and found.signature == expected, (case, found)


@pytest.mark.parametrize("line", [
    "srun: error: node2: task 1: Exited with exit code 1",
    "slurmstepd-node2: error: *** STEP 12.0 ON node2 CANCELLED AT 2026-12-01T10:00:00 ***",
    "deepspeed: error: the following arguments are required: user_script",
    "Build error: the extension failed",
    "ERROR: Could not find a version that satisfies the requirement flash-attn",
    "node1: error: no fix line follows, so not dscluster's",
])
def test_lines_that_only_look_like_dsclusters_own_error(line):
    found = explain.explain(line + "\n")
    assert found is None or found.signature != "program-error", found


def test_own_error_keeps_its_message_and_fix():
    found = explain.explain(CASES["own error behind pdsh"][0])
    assert found.cause == "no hostfile" and found.fix == "write one" and found.retry is False


@pytest.mark.parametrize("line", ["srun: error: g1301: task 0: Exited with exit code 2\n",
                                  "pdsh@vm: node1: ssh exited with exit code 3\n",
                                  "['python', '-u', 'train.py', '--local_rank=0'] exits with return code = 2\n"])
def test_an_exit_code_alone_is_not_a_usage_error(line):
    # Only dscluster's own training program gives 2/3/6 the meaning of a usage/config/permission error.
    found = explain.explain(line)
    assert found is None or found.signature != "input-error-exit", found


# Round 5's families, each read whatever its variable parts (texts written here, not the corpus's logs).
@pytest.mark.parametrize("text,expected", [
    ("srun: error: Unable to create step for job 4242.3: More processors requested than permitted\n",
     "slurm-request-invalid"),
    ("srun: error: Unable to create step for job <jobid>: Memory required by task is not available\n",
     "slurm-request-invalid"),
    ("srun: error: unable to create step: Requested node configuration is not available\n", "slurm-request-invalid"),
    ("srun: error: Unable to create step for job 77: Job/step already completing or completed\n", None),
    ("[1700000000.1] [n1:99:0] ib_iface.c:1003 UCX ERROR ibv_create_qp(rc) failed: Cannot allocate memory\n",
     "nccl-ib-memlock"),
    ("libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.\n", "nccl-ib-memlock"),
    ("n1:12:12 [0] misc/socket.cc:50 NCCL WARN ncclSocketInit: connecting to address  with family 0 is neither "
     "AF_INET(2) nor AF_INET6(10)\n", "nccl-no-interface"),
    ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
     "AssertionError: MoE not supported with Stage 3\n", "ds-incompatible"),
    ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: gradient_reduce_op='sum' "
     "is not supported with ZeRO stage 3\n", "ds-incompatible"),
])
def test_families_read_whatever_their_variable_parts(text, expected):
    found = explain.explain(text)
    assert (found.signature if found else None) == expected or (expected is None and found and
                                                                 found.signature != "slurm-request-invalid"), found

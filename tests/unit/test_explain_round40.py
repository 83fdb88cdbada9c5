"""Round 40's rules (issue 45), memory failures of multi-GPU training (sigmemory.py, the Slurm backend's signatures):
a GPU allocation of more than an exabyte (a corrupted size, not a shortage), ZeRO-Infinity's NVMe swap file read back
at another size than the tensor, and slurmstepd ending a job over its memory limit: a second wording of each, in
another version's or another caller's words than the corpus case it was written from, and near misses that must not
be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.launcher.backends.slurm import SlurmBackend
from dscluster.sigmemory import MEMORY_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # PyTorch 2.x's exception name and the asynchronous allocator's full stop, in a rank's prefixed traceback
    ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n",
     "cuda-oom-bogus-size"),
    # a pipeline stage's metadata receive going wrong first (the size header read out of step)
    ("  File \"/opt/conda/lib/python3.11/site-packages/torch/distributed/pipelining/stage.py\", line 1816, in _recv_meta\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n", "cuda-oom-bogus-size"),
    # an optimizer swap file (the corpus case was a parameter's), in DeepSpeed's later io handle
    ("/local_nvme/zero_stage_3/optimizer/rank1/140302004385408_gradient_988164096_75497472.tensor.swp: buffer nbytes "
     "!= file bytes 301989888 != 0\n", "nvme-swap-short"),
    ("python: /usr/local/lib/python3.10/dist-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_io_handle.cpp:140: "
     "int deepspeed_io_handle_t::read(torch::Tensor&, const char*, bool, bool): Assertion "
     "`static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.\n", "nvme-swap-short"),
    # slurmstepd without "error:" (older Slurm), a step's limit, and a node-suffixed slurmstepd
    ("slurmstepd: Job 1171978 exceeded memory limit (18202456 > 16384000), being killed\n"
     "slurmstepd: *** JOB 1171978 ON cuda-24-0 CANCELLED AT 2018-10-16T13:24:27 ***\n", "memcg-oom"),
    ("slurmstepd-gpu17: error: Step 4242.0 exceeded memory limit (90177536 > 83886080), being killed\n", "memcg-oom"),
    ("slurmstepd: error: Exceeded step memory limit\n", "memcg-oom"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # an ordinary out-of-memory: a real size is a shortage (lower the batch), not a corrupted one
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 5 has a total capacity of 23.43 GiB "
     "of which 210.06 MiB is free.\n", "cuda-oom-bogus-size"),
    ("RuntimeError: Trying to resize storage that is not resizable; more than 1EB requested\n", "cuda-oom-bogus-size"),
    # DeepSpeed's other aio failures: a missing libaio, and a swap path that is no directory
    ("[WARNING] async_io requires the dev libaio .so object and headers but these were not found.\n", "nvme-swap-short"),
    ("AssertionError: Not enough buffers 0 for swapping 1\n", "nvme-swap-short"),
    # slurmstepd's warning when the step went on (its memory partly swapped out), and a user's own words
    ("slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially swapped out to disk.\n",
     "memcg-oom"),
    ("my job exceeded memory limit yesterday, any idea?\n", "memcg-oom"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n") == "cuda-oom"
    assert sig("slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0.\n") == "memcg-oom"
    zh = FAILURES_ZH
    slurm_memory = [s for s in SlurmBackend.signatures if s.name == "memcg-oom"]
    assert len(slurm_memory) == 1
    for s in (*MEMORY_SIGNATURES, *slurm_memory):
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n").retry \
        is False

"""Round 93's rules (issue 45), from distributed training started from notebooks (accelerate's notebook_launcher, a
DeepSpeed example, a Kaggle notebook): the forked processes' `Cannot re-initialize CUDA in forked subprocess` where
accelerate's notebook_launcher is named in the lines before it (its frames, the cell's call) read as the kernel's CUDA
initialized before the launch (notebook-cuda-initialized, with the lines before the error: sigmessages.READS_BEFORE),
and accelerate's own refusal when libraries known to initialize CUDA were imported first; notebook_launcher called
without num_processes (notebook-launcher-num-processes); torch refusing a device index of -1, a local rank no launcher
set (local-rank-negative). A second wording of each, in another version's or caller's words than the corpus case it
was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain, sigmessages, sigtraining

NEW = ("local-rank-negative", "notebook-launcher-num-processes", "notebook-cuda-initialized")

_TB = "Traceback (most recent call last):\n"
_FORK = ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
         "the 'spawn' start method\n")
# accelerate before 0.19 in a notebook (huggingface/accelerate#940's and #182's frames): the launcher's frames, then
# the child's traceback inside torch's ProcessRaisedException
_NOTEBOOK_PARENT = (
    "---------------------------------------------------------------------------\n"
    "ProcessRaisedException                    Traceback (most recent call last)\n"
    "/tmp/ipykernel_33040/2138999366.py in <module>\n"
    "----> 1 notebook_launcher(train_loop, num_processes=2)\n\n"
    "~/python3.8/site-packages/accelerate/launchers.py in notebook_launcher(function, args, num_processes, use_fp16, "
    "mixed_precision, use_port)\n"
    '--> 122         start_processes(launcher, args=args, nprocs=num_processes, start_method="fork")\n\n'
    "~/python3.8/site-packages/torch/multiprocessing/spawn.py in start_processes(fn, args, nprocs, join, daemon, "
    "start_method)\n"
    "--> 198     while not context.join():\n\n"
    "ProcessRaisedException: \n\n"
    "-- Process 1 terminated with the following error:\n" + _TB)
_CHILD = (
    '  File "/nethome/u/miniconda3/envs/cups/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 59, in '
    "_wrap\n    fn(i, *args)\n"
    '  File "/nethome/u/miniconda3/envs/cups/lib/python3.7/site-packages/accelerate/utils.py", line 571, in __call__\n'
    "    self.launcher(*args)\n"
    '  File "/tmp/ipykernel_33040/2138999366.py", line 24, in train_loop\n    accelerator = Accelerator()\n'
    '  File "/nethome/u/miniconda3/envs/cups/lib/python3.7/site-packages/torch/cuda/__init__.py", line 161, in '
    "_lazy_init\n")
# a DataLoader worker forked inside the training function the launcher runs: the fork that failed is the worker's
_WORKER = (
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1346, in _process_data\n'
    "    data.reraise()\n"
    "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n"
    "Original Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
    '  File "/tmp/ipykernel_51/381.py", line 12, in __getitem__\n    return self.x[i].cuda()\n')


@pytest.mark.parametrize("text,expected", [
    # torch.device(type, index) with the index of a script run without a launcher (torch/csrc/Device.cpp), under
    # torch 2.x's rank prefix
    ("[rank0]: " + _TB + '[rank0]:   File "train.py", line 40, in <module>\n'
     '[rank0]:     device = torch.device("cuda", args.local_rank)\n'
     "[rank0]: RuntimeError: Device index must not be negative\n", "local-rank-negative"),
    # torch 0.4's words (torch/csrc/utils/device.cpp)
    ("RuntimeError: device index must be positive, got -1\n", "local-rank-negative"),
    # accelerate's check in today's words ("devices", July 2025) and the first release's (`num_process=...`)
    ("ValueError: You have to specify the number of devices you would like to use, add `num_processes=...` to your "
     "call.\n", "notebook-launcher-num-processes"),
    ("ValueError: You have to specify the number of GPUs you would like to use, add `num_process=...` to your call.\n",
     "notebook-launcher-num-processes"),
    # accelerate before 0.19: torch's words in the child, accelerate's frames before them
    (_NOTEBOOK_PARENT + _CHILD + _FORK, "notebook-cuda-initialized"),
    # the launcher named by the cell's call above a bare message (another shape of the same paste)
    ("notebook_launcher(training_function, args=(text_encoder, vae, unet), num_processes=2)\n\n" + _FORK,
     "notebook-cuda-initialized"),
    # accelerate's own refusal since November 2023 (launchers.py: libraries known to initialize CUDA on import), and
    # in today's words ("device")
    ("RuntimeError: Could not start distributed process. Libraries known to initialize CUDA upon import have been "
     "imported already. Please keep these imports inside your training function to try and help with this:\n"
     "\t* `bitsandbytes`\n", "notebook-cuda-initialized"),
    ("RuntimeError: Could not start distributed process. Libraries known to initialize device upon import have been "
     "imported already. Please keep these imports inside your training function to try and help with this:\n"
     "\t* `bitsandbytes`\n", "notebook-cuda-initialized"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # c10's own check of an index below -1 (c10/core/Device.h), the CUDA runtime's bad ordinal, an out-of-tree
    # backend's range check (torch's openreg test extension): other causes
    ("RuntimeError: Device index must be -1 or non-negative, got -2\n", "local-rank-negative"),
    ("RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some "
     "other API call, so the stacktrace below might be incorrect.\n", "local-rank-negative"),
    ("RuntimeError: The device index is out of range. It must be in [0, 2), but got 5.\n", "local-rank-negative"),
    # accelerate's other launcher refusals keep their own readings
    ("ValueError: You need to use at least 2 processes to use `--multi_gpu`.\n", "notebook-launcher-num-processes"),
    ("ValueError: The node_rank must be less than the number of nodes.\n", "notebook-launcher-num-processes"),
    ("ValueError: To launch a multi-device training from your notebook, the `Accelerator` should only be initialized "
     "inside your training function. Restart your notebook and make sure no cells initializes an `Accelerator`.\n",
     "notebook-launcher-num-processes"),
    # a DataLoader worker's fork inside the function notebook_launcher runs: cuda-fork's fix, not the kernel's
    (_NOTEBOOK_PARENT + _WORKER + _FORK, "notebook-cuda-initialized"),
    # the same torch words without a notebook launcher: a datasets map with num_proc (datasets#6435's shape), vLLM's
    # forked engine
    (_TB + '  File "/usr/lib/python3/dist-packages/multiprocess/pool.py", line 125, in worker\n'
     "    result = (True, func(*args, **kwds))\n" + _FORK, "notebook-cuda-initialized"),
    ("ERROR 03-17 01:09:24 [core.py:337] " + _FORK, "notebook-cuda-initialized"),
    # the launcher named in a notebook whose training then fails otherwise
    ("notebook_launcher(train, args, num_processes=2)\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
     "14.75 GiB of which 1.02 GiB is free.\n", "notebook-cuda-initialized"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_worker_and_plain_forks_stay_cuda_fork():
    assert sig(_NOTEBOOK_PARENT + _WORKER + _FORK) == "cuda-fork"
    assert sig("ERROR 03-17 01:09:24 [core.py:337] " + _FORK) == "cuda-fork"


def test_the_evidence_is_the_message_and_both_entries_say_the_same():
    found = explain.explain(_NOTEBOOK_PARENT + _CHILD + _FORK)
    assert found.evidence == _FORK.strip()
    entries = [s for s in explain.SIGNATURES if s.name == "notebook-cuda-initialized"]
    assert len(entries) == 2 and sigtraining.NOTEBOOK_LAUNCHER_FORK in sigmessages.READS_BEFORE
    assert {(s.cause, s.fix) for s in entries} == {(sigtraining.NOTEBOOK_CUDA_CAUSE, sigtraining.NOTEBOOK_CUDA_FIX)}


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

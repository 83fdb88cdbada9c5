"""A DataLoader worker's error, as torch raises it again in the rank (torch/_utils.py's ExceptionWrapper: `Caught X in
DataLoader worker process N.` then `Original Traceback`), is read as the worker's own: its type, its message, the
user's frame in the dataset. A worker killed by the kernel while its rank lived is host memory."""

from __future__ import annotations

from dscluster import explain

SITE = "/opt/conda/lib/python3.10/site-packages"


def reraised(where: str, original: str, frame: str = '  File "/work/data.py", line 41, in __getitem__\n'
             '    img = Image.open(path)\n') -> str:
    typ = original.split(":", 1)[0]
    return ("Traceback (most recent call last):\n"
            '  File "/work/train.py", line 120, in <module>\n    for batch in loader:\n'
            f'  File "{SITE}/torch/utils/data/dataloader.py", line 1567, in _process_data\n    data.reraise()\n'
            f'  File "{SITE}/torch/_utils.py", line 794, in reraise\n    raise exception\n'
            f"{typ}: Caught {typ.rsplit('.', 1)[-1]} {where}.\n"
            "Original Traceback (most recent call last):\n"
            f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 374, in _worker_loop\n'
            "    data = fetcher.fetch(index)\n"
            f"{frame}{original}\n")


def test_a_workers_error_is_its_own_type_message_and_frame():
    exp = explain.explain(reraised("in DataLoader worker process 3", "ValueError: sample 17: the caption is empty"))
    assert exp.signature == "python-error" and exp.retry is False
    assert exp.error["message"] == "sample 17: the caption is empty" and exp.error["where"] == "/work/data.py:41"


def test_a_known_cause_inside_a_worker_is_named():
    exp = explain.explain(reraised("in DataLoader worker process 0", "OSError: [Errno 24] Too many open files"))
    assert exp.signature == "open-files-limit", exp
    # A DataParallel replica's, and the pin memory thread's, the same way.
    exp = explain.explain(reraised("in replica 1 on device 1", "torch.OutOfMemoryError: CUDA out of memory. Tried to "
                                   "allocate 2.00 GiB (GPU 1; 23.65 GiB total capacity)"))
    assert exp.signature == "cuda-oom", exp


def test_a_workers_error_raised_from_another_is_the_last_of_its_chain():
    """transformers raises "Unable to create tensor ..." from torch's "expected sequence of length ...": the worker's
    Original Traceback is itself a chain, and its last error (with its frame in the user's collate) is the rank's."""
    chain = ("ValueError: expected sequence of length 9 at dim 1 (got 5)\n\n"
             "The above exception was the direct cause of the following exception:\n\n"
             "Traceback (most recent call last):\n"
             f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 374, in _worker_loop\n'
             "    data = fetcher.fetch(index)\n"
             '  File "/work/collate.py", line 12, in collate\n    return tok(texts, return_tensors="pt")\n'
             "ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
             "'padding=True' 'truncation=True' to have batched tensors with the same length.")
    exp = explain.explain(reraised("in DataLoader worker process 0", chain, frame=""))
    assert exp.error["message"].startswith("Unable to create tensor") and exp.error["where"] == "/work/collate.py:12"
    assert exp.signature in ("ragged-list-tensor", "batch-unpadded") and exp.retry is False, exp


def test_a_reraise_without_its_original_traceback_stays_the_reraise():
    log = ("Traceback (most recent call last):\n  File \"/work/train.py\", line 9, in <module>\n"
           "KeyError: Caught KeyError in DataLoader worker process 0.\n")
    exp = explain.explain(log)
    assert exp.signature == "python-error" and "Caught KeyError" in exp.error["message"]


def test_a_dataloader_worker_killed_while_its_rank_lived_is_host_memory():
    for log in ("RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.\n",
                "[rank3]: Traceback (most recent call last):\n[rank3]:   File \"/w/t.py\", line 5, in <module>\n"
                "[rank3]: RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed. \n"):
        exp = explain.explain(log)
        assert exp.signature == "memcg-oom" and exp.retry is False and "DataLoader worker" in exp.cause, log


def test_near_misses_of_a_killed_worker():
    # SIGBUS: shared memory (torch adds its own hint about it).
    bus = ("RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error. It is possible that dataloader's "
           "workers are out of shared memory. Please try to raise your shared memory limit.\n")
    assert explain.explain(bus).signature == "dev-shm-full"
    # A worker that exited without a signal named: no cause of memory claimed.
    gone = "RuntimeError: DataLoader worker (pid(s) 1234, 1235) exited unexpectedly\n"
    assert explain.explain(gone).signature != "memcg-oom"

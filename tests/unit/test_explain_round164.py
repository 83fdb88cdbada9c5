"""Round 164's rules (issue 45), from live failures of the resources, signals and processes family run through
`dscluster launch --local 2`: a DataLoader worker's segmentation fault in torch's own words (torch/csrc/DataLoader.cpp's
worker signal handler, dataloader.py's exit checks), read as dataloader-worker-segfault; a __getattr__ override that
recurses (CPython's traceback with the repeated __getattr__ frame), read as module-getattr-recursion; input() under a
launcher with no terminal (CPython's builtin_input EOFError), read as stdin-eof; and numpy's refusal of one array
(numpy/_core/_exceptions.py), now read as host-alloc-refused. Second wordings (other versions' and callers' words than
the live cases they were written from) and near misses, other components' text with like words that must not be read
as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dataloader-worker-segfault", "module-getattr-recursion", "stdin-eof")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # the SIGCHLD check's words alone (torch 1.x, _error_if_any_worker_fails through signal_handling.py's handler)
    ("  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/signal_handling.py\", line 63, in handler\n"
     "    _error_if_any_worker_fails()\n"
     "RuntimeError: DataLoader worker (pid 9121) is killed by signal: Segmentation fault. \n"),
    # the worker's own handler before the main process's vague error (torch 2.x, pid(s))
    ("ERROR: Unexpected segmentation fault encountered in worker.\n"
     "Traceback (most recent call last):\n"
     "  File \"train.py\", line 40, in <module>\n"
     "    for batch in loader:\n"
     "RuntimeError: DataLoader worker (pid(s) 7012, 7013) exited unexpectedly\n"),
])
def test_dataloader_worker_segfault(text):
    assert sig(text) == "dataloader-worker-segfault"


@pytest.mark.parametrize("text", [
    # the worker's bus error: /dev/shm too small
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
     "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's "
     "workers are out of shared memory. Please try to raise your shared memory limit.\n"),
    # the worker killed by the OOM killer
    "RuntimeError: DataLoader worker (pid 5151) is killed by signal: Killed. \n",
    # a rank's own segfault, no DataLoader worker
    "Fatal Python error: Segmentation fault\n\nThread 0x00007f2a (most recent call first):\n"
    "  File \"train.py\", line 12 in <module>\nSegmentation fault (core dumped)\n",
])
def test_near_misses_are_not_dataloader_worker_segfault(text):
    assert sig(text) != "dataloader-worker-segfault"


@pytest.mark.parametrize("text", [
    # torch's own Module.__getattr__ repeated: a wrapper reading self.model before super().__init__() (Python 3.8)
    ("Traceback (most recent call last):\n"
     "  File \"run.py\", line 30, in <module>\n"
     "    model = Wrapped(base)\n"
     "  File \"run.py\", line 12, in __init__\n"
     "    self.model = model\n"
     "  File \"/usr/local/lib/python3.8/site-packages/torch/nn/modules/module.py\", line 1185, in __getattr__\n"
     "    if name in self._parameters:\n"
     "  File \"/usr/local/lib/python3.8/site-packages/torch/nn/modules/module.py\", line 1185, in __getattr__\n"
     "    if name in self._parameters:\n"
     "  [Previous line repeated 993 more times]\n"
     "RecursionError: maximum recursion depth exceeded while calling a Python object\n"),
    # Python 3.12's carets and the plain wording, as a rank prints it
    ("[rank0]:   File \"/work/lm/wrap.py\", line 9, in __getattr__\n"
     "[rank0]:     return getattr(self.inner, attr)\n"
     "[rank0]:                    ^^^^^^^^^^\n"
     "[rank0]:   [Previous line repeated 996 more times]\n"
     "[rank0]: RecursionError: maximum recursion depth exceeded\n"),
])
def test_getattr_recursion(text):
    assert sig(text) == "module-getattr-recursion"


@pytest.mark.parametrize("text", [
    # a recursive function of the user's own: not a __getattr__
    ("Traceback (most recent call last):\n"
     "  File \"prep.py\", line 20, in flatten\n"
     "    return [y for x in v for y in flatten(x)]\n"
     "  File \"prep.py\", line 20, in flatten\n"
     "    return [y for x in v for y in flatten(x)]\n"
     "  [Previous line repeated 995 more times]\n"
     "RecursionError: maximum recursion depth exceeded in comparison\n"),
    # a __getattr__ frame once, then another error
    ("  File \"model.py\", line 41, in __getattr__\n"
     "    raise AttributeError(name)\n"
     "AttributeError: config\n"),
])
def test_near_misses_are_not_getattr_recursion(text):
    assert sig(text) != "module-getattr-recursion"


@pytest.mark.parametrize("text", [
    # Python 2's raw_input under mpirun
    ("Overwrite? (y/n) Traceback (most recent call last):\n"
     "  File \"train.py\", line 33, in <module>\n"
     "    ans = raw_input('Overwrite? (y/n) ')\n"
     "EOFError: EOF when reading a line\n"),
    # a library's prompt (a login asked for on stdin) in a rank's prefixed lines
    ("[rank1]:   File \"/opt/venv/lib/python3.11/site-packages/somelib/login.py\", line 58, in prompt\n"
     "[rank1]:     token = input(\"Enter your token: \")\n"
     "[rank1]: EOFError: EOF when reading a line\n"),
])
def test_stdin_eof(text):
    assert sig(text) == "stdin-eof"


@pytest.mark.parametrize("text", [
    # pickle of an empty or truncated file
    ("  File \"/opt/venv/lib/python3.10/site-packages/torch/serialization.py\", line 1028, in _legacy_load\n"
     "    magic_number = pickle_module.load(f, **pickle_load_args)\n"
     "EOFError: Ran out of input\n"),
    # a gzip file cut short
    "EOFError: Compressed file ended before the end-of-stream marker was reached\n",
    # multiprocessing's bare EOFError from a closed pipe
    ("  File \"/usr/lib/python3.10/multiprocessing/connection.py\", line 383, in _recv\n"
     "    raise EOFError\nEOFError\n"),
])
def test_near_misses_are_not_stdin_eof(text):
    assert sig(text) != "stdin-eof"


@pytest.mark.parametrize("text", [
    # numpy 1.17's first wording (no size)
    "MemoryError: Unable to allocate array with shape (156816, 36, 53806) and data type uint8\n",
    # numpy 1.2x's module path and a size in MiB
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 762. MiB for an array with shape (100000, 1000) "
     "and data type float64\n"),
])
def test_numpy_array_refused_is_host_alloc_refused(text):
    assert sig(text) == "host-alloc-refused"


@pytest.mark.parametrize("text", [
    # Slurm's refusal of a job's resources
    "srun: error: Unable to allocate resources: Requested node configuration is not available\n",
    # a bare MemoryError: nothing names one allocation
    "Traceback (most recent call last):\n  File \"prep.py\", line 9, in <module>\n    rows = list(reader)\nMemoryError\n",
])
def test_near_misses_are_not_host_alloc_refused(text):
    assert sig(text) != "host-alloc-refused"

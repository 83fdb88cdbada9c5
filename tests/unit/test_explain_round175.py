"""Round 175's rules (issue 45, live: Python multiprocessing and threads inside a training script): set_start_method
called twice (CPython's multiprocessing/context.py: "context has already been set"), a ProcessPoolExecutor whose
worker died (concurrent/futures/process.py's BrokenProcessPool), and a Pool or Queue given something pickle refuses
(multiprocessing/reduction.py's ForkingPickler.dumps); second wordings and near misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("mp-start-method-twice", "process-pool-broken", "pool-unpicklable")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torch.multiprocessing's re-export, an older Python's frame
    ('  File "/opt/conda/lib/python3.8/multiprocessing/context.py", line 243, in set_start_method\n'
     "    raise RuntimeError('context has already been set')\n"
     "RuntimeError: context has already been set\n"),
    "[rank3]: RuntimeError: context has already been set\n",
])
def test_start_method_twice(text):
    assert sig(text) == "mp-start-method-twice"


@pytest.mark.parametrize("text", [
    # a submit after the pool broke (process.py's _broken message)
    ("concurrent.futures.process.BrokenProcessPool: A child process terminated abruptly, the process pool is not "
     "usable anymore\n"),
    # Python 3.8's words, the class imported bare
    ("    raise self._exception\n"
     "BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or "
     "pending.\n"),
])
def test_process_pool_broken(text):
    assert sig(text) == "process-pool-broken"


@pytest.mark.parametrize("text", [
    # Python 3.10's PicklingError for a module-level lambda, Pool.map under fork
    ('  File "/usr/lib/python3.10/multiprocessing/reduction.py", line 51, in dumps\n'
     "    cls(buf, protocol).dump(obj)\n"
     "_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f3c2a1b5e10>: attribute lookup <lambda> on "
     "__main__ failed\n"),
    # a lock in apply_async's arguments
    ('  File "/usr/lib/python3.11/multiprocessing/reduction.py", line 51, in dumps\n'
     "    cls(buf, protocol).dump(obj)\n"
     "TypeError: cannot pickle '_thread.lock' object\n"),
])
def test_pool_unpicklable(text):
    assert sig(text) == "pool-unpicklable"


@pytest.mark.parametrize("text", [
    # the initializer's failure and a result failing to unpickle: other BrokenProcessPool causes
    "concurrent.futures.process.BrokenProcessPool: A process in the initializer failed\n",
    # loky (joblib) words its own worker's death otherwise
    ("joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was "
     "unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an "
     "excessive memory usage causing the Operating System to kill the worker.\n"),
    # torch.save pickling a lambda: no multiprocessing frame
    ('  File "/usr/lib/python3.11/site-packages/torch/serialization.py", line 881, in _save\n'
     "    pickler.dump(obj)\n"
     "AttributeError: Can't pickle local object 'build.<locals>.<lambda>'\n"),
    # another library's context already set
    "ValueError: the global context has already been set for this run\n",
])
def test_near_misses(text):
    assert sig(text) not in NEW

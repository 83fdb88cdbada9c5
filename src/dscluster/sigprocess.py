"""Failure signatures of Python's own multiprocessing in a training script (issue 45, live round 175): a start method
set twice, a process pool whose worker died, a function or object the pool cannot pickle. Written from CPython's
multiprocessing and concurrent.futures sources; each is deterministic, none lets a restart help. sigmessages.py places
this table right after siglibs.py's, in the order these had there."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

PROCESS_SIGNATURES: tuple[Signature, ...] = (
    # Round 175 (live): CPython's multiprocessing/context.py, set_start_method called again without force=True.
    _sig("mp-start-method-twice", r"RuntimeError: context has already been set",
         "multiprocessing.set_start_method (or torch.multiprocessing's) was called when the start method was already "
         "set: the script sets it twice (at module level and in main(), in a function run for each worker or "
         "epoch), or an imported module or library set it first.",
         "Call set_start_method once, under if __name__ == '__main__': before any process starts; elsewhere use "
         "multiprocessing.get_context('spawn') for the Pool or Process that needs it, or pass force=True. A restart "
         "fails the same way.", retry=False),
    # Round 175 (live): CPython's concurrent/futures/process.py (_ExecutorManagerThread.terminate_broken, 3.9+; older
    # _queue_management_worker): a worker of a ProcessPoolExecutor ended without returning its result, and every
    # pending future raises BrokenProcessPool "A process in the process pool was terminated abruptly while the future
    # was running or pending."; a later submit gets "A child process terminated abruptly, the process pool is not
    # usable anymore". Not the initializer's failure, a result failing to un-pickle, nor loky's TerminatedWorkerError.
    _sig("process-pool-broken", r"BrokenProcessPool: (?:A process in the process pool was terminated abruptly|"
         r"A child process terminated abruptly)",
         "A worker process of a concurrent.futures ProcessPoolExecutor (a data preparation or tokenizing step) died "
         "without returning its result: the kernel killed it (out of memory: see dmesg), a native library crashed "
         "in it (a segfault), the worker's code ended the process (os._exit, a library calling exit), or a spawned "
         "worker failed while importing the script. The worker's own error, if any, is in the lines before.",
         "Find why the worker died: its own traceback in the log, dmesg for the OOM killer, the exit code; give the "
         "pool fewer workers (max_workers) or less data per task when memory runs out, raise an exception instead "
         "of exiting in worker code, and keep module-level work under if __name__ == '__main__':. A restart fails "
         "the same way when the data or code is the cause.", retry=False),
    # Round 175 (live): multiprocessing.Pool (map, apply_async, imap) and a Queue's put pickle each task's function and
    # arguments in multiprocessing/reduction.py, ForkingPickler.dumps (called from connection.py's send), whatever the
    # start method (fork too): pickle refuses a lambda or nested function (_pickle.c save_global: AttributeError "Can't
    # pickle local object 'f.<locals>.g'"; PicklingError "Can't pickle <function <lambda> ...>: attribute lookup
    # <lambda> on __main__ failed"; TypeError "cannot pickle 'T' object").
    # Only right after the dumps frame; spawn-unpicklable (sigtraining.py, earlier) keeps spawn's Process (its dump).
    _sig("pool-unpicklable", r"multiprocessing[/\\]reduction\.py\", line \d+, in dumps\n(?:[^\n]*\n){1,3}?[^\n]*?"
         r"(?P<ev>(?:AttributeError: Can't pickle local object|(?:_pickle\.)?PicklingError: Can't pickle|"
         r"TypeError: cannot pickle) [^\n]*)",
         "A multiprocessing Pool (map, imap, apply_async) or Queue pickles the function and arguments it sends to "
         "its worker processes, whatever the start method, and one of them cannot be pickled: a lambda, a function "
         "or class defined inside another function (<locals>), a lock, an open file or connection.",
         "Define the function at module level (functools.partial of a module-level function for extra arguments) "
         "instead of a lambda or a nested function, and create unpicklable objects (locks, files, connections) in "
         "the worker (the Pool's initializer). A restart fails the same way.", retry=False),
)

"""Entry point of every rank: `python -m dscluster.train ... --deepspeed --deepspeed_config ds_config.json`.

Also runnable as a script path (the DeepSpeed launcher's classic form), hence absolute imports.
Bad input ends every rank with the same message + fix and a non-zero exit code, no traceback.
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    # Run as a script path: its folder (model.py, metrics.py, ...) must not shadow top-level modules,
    # and the package root must be importable even where dscluster is not installed.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    sys.path.insert(0, os.path.dirname(os.path.dirname(_here)))


def main(argv: list[str] | None = None) -> int:
    from dscluster.errors import DsclusterError
    from dscluster.i18n import tr
    from dscluster.train.trainer import plan, run

    rank = os.environ.get("RANK", "0")
    try:
        return run(plan(argv))
    except DsclusterError as err:
        prefix = "" if rank == "0" else f"[rank {rank}] "
        lines = [f"{prefix}{tr('error')}: {err.message}"] + ([f"{prefix}  {tr('fix')}: {err.hint}"] if err.hint else [])
        print("\n".join(lines), file=sys.stderr, flush=True)
        if os.environ.get("DSCLUSTER_DEBUG") == "1":
            raise
        return int(err.exit_code)
    except KeyboardInterrupt:
        return 130


def leave(code: int) -> None:
    """End the rank without Python's finalization, as exit-abort's fix tells users' scripts to.

    Why: once the run is over (final checkpoint committed, process group destroyed), a thread of gloo or NCCL
    still releasing a finished collective's tensors (DeepSpeed's ZeRO holds them) can need the GIL while Python
    finalizes; it cannot take it and the rank aborts ("terminate called without an active exception", exit 134),
    which the supervisor must read as a failure. Logging's handlers and the standard streams are flushed first;
    nothing else the trainer writes waits for an atexit handler (metrics are appended line by line, the rank's
    progress record is removed by the node's watchdog). A rank an MPI launcher started (DeepSpeed's MPI discovery
    initializes mpi4py) finalizes MPI first: the MPI launcher reports a rank that exits without MPI_Finalize as an
    abnormal termination and exits 1."""
    import logging

    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to save
            pass
    os._exit(code)


if __name__ == "__main__":
    leave(main())

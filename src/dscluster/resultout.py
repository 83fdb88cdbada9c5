"""stdout reserved for a command's result: `run=$(dscluster launch --detach ...)` captures the run id alone.

A command whose output a script captures (`launch`/`demo` detached into a pipe, or with --json) must
print its result, and nothing else, on stdout, like `docker run -d` or a batch
scheduler's `--parsable` submission. What else
the process writes while it prepares the run is talk for a human, and goes to stderr: the progress
lines of dscluster itself, and whatever the libraries it imports write to their stdout (DeepSpeed's
logger writes "Setting accelerator to CPU" to stdout when it is imported; a child process inherits
descriptor 1). So while the command works, both `sys.stdout` and descriptor 1 point at stderr; the
result is written to the real stdout, kept aside on its own descriptor.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO


def captured(stream: TextIO | None = None) -> bool:
    """Whether stdout goes to a pipe or a file (a script reads it), not to a person at a terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


@contextlib.contextmanager
def result_stdout(active: bool = True) -> Iterator[TextIO]:
    """While active, everything written to stdout (Python's and descriptor 1's, children included) goes to
    stderr; the stream yielded writes to the real stdout. Inactive: yields sys.stdout and changes nothing."""
    if not active:
        yield sys.stdout
        return
    sys.stdout.flush()
    try:
        real_fd = sys.stdout.fileno()
        err_fd = sys.stderr.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        # No descriptors (an embedding host's streams): Python's own writes are all that can be kept apart.
        real = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            yield real
        return
    saved = os.dup(real_fd)
    result = os.fdopen(saved, "w", encoding=sys.stdout.encoding or "utf-8", errors="replace", closefd=True)
    os.dup2(err_fd, real_fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield result
    finally:
        result.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, real_fd)
        result.close()

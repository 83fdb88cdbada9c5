"""Each launcher backend's own options, as argparse offers them: a group per backend on `launch` (a
scheduler's request, its batch job) and on `doctor` (its own checks), built from what the backend declares
(launcher/backends/base.Option); nothing here names a backend."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from dscluster.commands.argtypes import MAX_PROCS, count
from dscluster.launcher import backends
from dscluster.sim.names import MAX_NODES


def option_type(option: backends.Option) -> Callable[[str], int] | None:
    """The argparse type that checks a backend option of a whole-number kind (None: text or a switch): the
    command line's, and the notebook API's through jupyter/backendfields.py."""
    if option.kind == "nodes":
        return count(1, MAX_NODES)
    if option.kind == "procs":
        return count(1, MAX_PROCS)
    return count(option.minimum) if option.kind == "count" else None


def add_backend_options(p: argparse.ArgumentParser, command: str) -> None:
    """The options every backend declares for `command` ("launch" or "doctor"), one group per backend."""
    for backend in backends.every():
        options = backend.launch_options() if command == "launch" else backend.doctor_options()
        if not options:
            continue
        g = p.add_argument_group(backend.options_title(command))
        for o in options:
            if o.kind == "switch":
                g.add_argument(o.flag, action="store_true", help=o.help)
            else:
                g.add_argument(o.flag, metavar=o.metavar, default=o.default, help=o.help, type=option_type(o))


def scheduler_request(args: argparse.Namespace) -> Any | None:
    """The scheduler request the backends' options give (RunRequest.scheduler); None when none was given."""
    given = vars(args)
    return next((r for b in backends.every() if (r := b.request_from(given)) is not None), None)


def batch_requested(args: argparse.Namespace) -> bool:
    """Whether a backend's option asks for a batch job instead of a supervisor here."""
    return any(b.batch_requested(vars(args)) for b in backends.every())

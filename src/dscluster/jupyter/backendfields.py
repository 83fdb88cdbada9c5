"""Each launcher backend's own launch options, as the notebook API (`dscluster.api.launch(options=...)`) and a
launch request's body (`"options": {...}`) give them: keyed by the option's `dest` (the CLI's flag without its
dashes, `-` as `_`), checked by the option's kind as the CLI's argparse types check it, then handed to the
backends as the CLI hands them (commands/backendargs.py), so a scheduler's request is the same typed one
whichever view asked. Nothing here names a backend."""

from __future__ import annotations

import difflib
from typing import Any

from dscluster.commands.argtypes import MAX_PROCS
from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher import backends
from dscluster.sim.names import MAX_NODES


def known_options() -> dict[str, backends.Option]:
    """dest -> the option, over every registered backend's `launch_options`."""
    return {o.dest: o for b in backends.every() for o in b.launch_options()}


def checked(option: backends.Option, value: object) -> Any:
    """`value` as the option's kind takes it (a whole number in its range, true/false, text), or UsageError."""
    key = option.dest
    if option.kind == "switch":
        if not isinstance(value, bool):
            raise UsageError(tr("option {key!r} must be true or false", key=key), tr("e.g. {key}=True", key=key),
                             setting=key)
        return value
    if option.kind in ("nodes", "procs", "count"):
        lo = 1 if option.kind != "count" else option.minimum
        hi = {"nodes": MAX_NODES, "procs": MAX_PROCS}.get(option.kind)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
            bounds = tr("from {lo} to {hi}", lo=lo, hi=hi) if hi is not None else tr("{lo} or more", lo=lo)
            raise UsageError(tr("option {key!r} must be a whole number {bounds}", key=key, bounds=bounds),
                             tr("e.g. {key}={lo}", key=key, lo=lo), setting=key)
        return value
    if not isinstance(value, str) or not value.strip():
        raise UsageError(tr("option {key!r} must be text", key=key), tr("give it as the CLI's {flag} takes it",
                                                                        flag=option.flag), setting=key)
    return value.strip()


def backend_request(options: object) -> Any | None:
    """The scheduler request the backends' options give (RunRequest.scheduler, the backend's own type); None
    when none is given. An unknown option, a value of the wrong kind and a batch job (the CLI's: it needs
    no supervisor here) are refused, naming the option."""
    if options is None or options == {}:
        return None
    if not isinstance(options, dict):
        raise UsageError(tr("'options' must map a launcher's option names to values"),
                         tr("e.g. options={{'nodes': 2}}; `dscluster launch --help` lists each launcher's options"),
                         setting="options")
    known = known_options()
    given: dict[str, Any] = dict.fromkeys(known)
    for key, value in options.items():
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            raise UsageError(tr("unknown launcher option {key!r}", key=key),
                             (tr("did you mean {m!r}? ", m=close[0]) if close else "")
                             + tr("the options are: {names}", names=", ".join(sorted(known)) or "-"), setting=str(key))
        if value is not None:
            given[key] = checked(known[key], value)
    if any(b.batch_requested(given) for b in backends.every()):
        raise UsageError(tr("a batch job is submitted from a terminal, not from a notebook or the panel"),
                         tr("run the same launch with `dscluster launch`, or leave the batch option out"),
                         setting="options")
    return next((r for b in backends.every() if (r := b.request_from(given)) is not None), None)

"""Each launcher backend's own launch options, as the notebook API (`dscluster.api.launch(options=...)`) and a
launch request's body (`"options": {...}`) give them: keyed by the option's `dest` (the CLI's flag without its
dashes, `-` as `_`), checked by the option's kind as the CLI's argparse types check it, then handed to the
backends as the CLI hands them (commands/backendargs.py), so a scheduler's request is the same typed one
whichever view asked. Nothing here names a backend."""

from __future__ import annotations

import argparse
import difflib
from typing import Any

from dscluster.commands.backendargs import option_type
from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher import backends


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
    parse = option_type(option)
    if parse is not None:  # the command line's own check of a whole number in its range
        try:
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise argparse.ArgumentTypeError(tr("{v!r} is not a whole number", v=value))
            return parse(str(value).strip())
        except argparse.ArgumentTypeError as err:
            raise UsageError(tr("option {key!r}: {why}", key=key, why=str(err)),
                             tr("give it as the CLI's {flag} takes it", flag=option.flag), setting=key) from None
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

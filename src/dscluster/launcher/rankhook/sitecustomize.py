"""On every rank's PYTHONPATH (launcher/plan.py): record the rank's collectives (launcher/progress.py), then
run the `sitecustomize` this one shadows, if the interpreter has one further along its path."""

import os
import sys


def _chain() -> None:
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


if os.environ.get("RANK") and os.environ.get("DSCLUSTER_PROGRESS") == "1":
    try:
        from dscluster.launcher import progress

        progress.install()
    except Exception:  # noqa: BLE001 - a rank runs unrecorded rather than not at all
        pass
try:
    _chain()
except Exception:  # noqa: BLE001 - as Python does with a failing sitecustomize: the program still runs
    pass

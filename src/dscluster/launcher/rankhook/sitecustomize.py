"""On every rank's PYTHONPATH (launcher/plan.py): record the rank's collectives (launcher/progress.py), then
run the `sitecustomize` this one shadows, if the interpreter has one further along its path.

It also gives a rank torchrun's name for the processes on its node, LOCAL_WORLD_SIZE, where its launcher set only
DeepSpeed's (LOCAL_SIZE: DeepSpeed's launch.py on every node of a pdsh/ssh run): scripts written for torchrun read
it (`int(os.environ["LOCAL_WORLD_SIZE"])`) and would stop at a KeyError. Only that alias: GROUP_RANK or
TORCHELASTIC_* would tell libraries (Lightning's TorchElasticEnvironment) an elastic agent runs the rank."""

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


if os.environ.get("RANK") and os.environ.get("LOCAL_SIZE") and "LOCAL_WORLD_SIZE" not in os.environ:
    os.environ["LOCAL_WORLD_SIZE"] = os.environ["LOCAL_SIZE"]
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

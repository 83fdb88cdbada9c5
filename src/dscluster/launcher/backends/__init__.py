"""The registry of launcher backends: one class per backend, one module each (see base.py).

`get(name)` is how every other module asks what a run's backend does; nothing outside this package
compares launcher names.
"""

from __future__ import annotations

from dscluster.launcher.backends.base import Backend, NodeTools, Option, ToolCheck
from dscluster.launcher.backends.local import LocalBackend
from dscluster.launcher.backends.mpich import MPICHBackend
from dscluster.launcher.backends.openmpi import OpenMPIBackend
from dscluster.launcher.backends.pdsh import PdshBackend
from dscluster.launcher.backends.slurm import SlurmBackend

__all__ = ["Backend", "NodeTools", "Option", "ToolCheck", "every", "failure_lines", "get", "host_packages", "known", "node_packages",
           "names", "owner", "programs", "rank_labels", "register", "signatures", "tools_pattern", "signal_lines",
           "spec_names"]

_BACKENDS: dict[str, Backend] = {}

# DeepSpeed launchers that dscluster does not supervise (named with the reason when asked for).
OTHER_LAUNCHERS = ("mvapich", "impi")
DEFAULT = "pdsh"


def register(backend: type[Backend]) -> type[Backend]:
    """Add a backend class (usable as a decorator); its `name` must be new."""
    if not backend.name or backend.name in _BACKENDS:
        raise ValueError(f"a backend needs a new name, not {backend.name!r}")
    _BACKENDS[backend.name] = backend()
    return backend


def unregister(name: str) -> None:
    """Remove a backend (tests that plug one in take it out again)."""
    _BACKENDS.pop(name, None)


for _cls in (LocalBackend, PdshBackend, OpenMPIBackend, SlurmBackend, MPICHBackend):
    register(_cls)


def known(name: str | None) -> bool:
    return name in _BACKENDS


def get(name: str | None) -> Backend:
    """The backend called `name` (None: the default, pdsh); KeyError for an unknown one (the spec parser
    and runnerflags.check_launcher refuse unknown names with a message first)."""
    return _BACKENDS[name or DEFAULT]


def names() -> tuple[str, ...]:
    return tuple(_BACKENDS)


def every() -> tuple[Backend, ...]:
    """Every registered backend, in registration order."""
    return tuple(_BACKENDS.values())


def owner(request: object) -> Backend:
    """The backend whose scheduler request `request` is (RunRequest.scheduler)."""
    return next(b for b in _BACKENDS.values() if b.owns(request))


def signatures() -> tuple:
    """Every registered backend's `signatures` (signatures.py)."""
    return tuple(s for b in _BACKENDS.values() for s in b.signatures)


def tools_pattern() -> str:
    """A regular expression of every registered backend's programs (`node_tools`), longest first: the
    explainer's `launcher-missing` (signatures.py)."""
    import re  # noqa: PLC0415

    tools = {re.escape(t) for b in _BACKENDS.values() for t in b.node_tools}
    return "|".join(sorted(tools, key=lambda t: (-len(t), t)))


def node_packages() -> tuple[str, ...]:
    """Every registered backend's `node_packages`, each once, in registration order (the node image's
    LAUNCHER_PACKAGES, deploy/image.py)."""
    return tuple(dict.fromkeys(p for b in _BACKENDS.values() for p in b.node_packages))


def host_packages() -> tuple[str, ...]:
    """Every registered backend's `host_packages`, each once, in registration order (scripts/setup.sh test,
    through packages.py)."""
    return tuple(dict.fromkeys(p for b in _BACKENDS.values() for p in b.host_packages))


def programs() -> tuple[str, ...]:
    """Every registered backend's `programs` (logtext.py)."""
    return tuple(p for b in _BACKENDS.values() for p in b.programs)


def failure_lines() -> tuple[str, ...]:
    """Every registered backend's `failure_lines` (runs/supervising/detect.py)."""
    return tuple(line for b in _BACKENDS.values() for line in b.failure_lines)


def signal_lines() -> tuple[str, ...]:
    """Every registered backend's `signal_line` (rankerror.py)."""
    return tuple(b.signal_line for b in _BACKENDS.values() if b.signal_line)


def rank_labels() -> tuple[str, ...]:
    """Every registered backend's `rank_label` (logtext.py)."""
    return tuple(b.rank_label for b in _BACKENDS.values() if b.rank_label)


def spec_names() -> tuple[str, ...]:
    """The names a cluster spec's `launcher` and `--launcher` take (local is `--local N`)."""
    return tuple(n for n, b in _BACKENDS.items() if b.in_spec)

"""The cluster as the panel shows it: the resolved spec's nodes, each with its latest resource sample.

Without a cluster spec (a single workstation, `dscluster demo`) the cluster is this machine alone.
The node this server runs on is sampled directly; the others are read from what their agents publish.
"""

from __future__ import annotations

import collections
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from dscluster import paths
from dscluster.errors import DsclusterError
from dscluster.node import stats as nodestats


@dataclass
class ClusterView:
    name: str
    shared_dir: Path
    nodes: list[dict]  # {"name","address","slots"}
    source: str  # "spec" | "local"
    spec_path: str | None = None
    error: dict | None = None
    spec: object | None = field(default=None, repr=False)
    explicit: bool = False  # the cluster was asked for by name or path (not the default spec order)

    def shared_dirs(self) -> list[Path]:
        """Where this view's runs live, by the CLI's one rule (`store.run_locations`, as `dscluster runs`
        applies it): the cluster's shared directory, this machine's, and, unless a cluster was asked for by
        name, those of simulated clusters that are down. A directory reached twice (a symlink, the same
        mount) is listed once."""
        from dscluster.runs.records.store import run_locations

        out: list[Path] = []
        for d in run_locations(self.shared_dir if self.source == "spec" else None, stopped_sims=not self.explicit):
            if d.resolve() not in [o.resolve() for o in out]:
                out.append(d)
        return out

    def runs_dirs(self) -> list[Path]:
        """`shared_dirs`' runs directories (<shared>/runs), as the notebook API's `Run` takes them."""
        return [paths.runs_dir(d) for d in self.shared_dirs()]


def is_local_address(address: str) -> bool:
    """True when this machine owns `address` (binding to it succeeds): the server runs on that node."""
    if address in ("localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        infos = socket.getaddrinfo(address, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        return False
    for family, _type, _proto, _canon, sockaddr in infos:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((sockaddr[0], 0))
                return True
        except OSError:
            continue
    return False


def local_view(error: dict | None = None) -> ClusterView:
    host = socket.gethostname()
    return ClusterView(name="local", shared_dir=paths.local_shared(), source="local",
                       nodes=[{"name": host, "address": "127.0.0.1", "slots": None}], error=error)


def resolve(arg: str | None = None) -> ClusterView:
    """The spec that `--cluster arg` would use (resolve_spec's order), or this machine alone."""
    try:
        from dscluster.cluster.spec import resolve_spec
    except ImportError:
        return local_view()
    try:
        spec = resolve_spec(arg)
    except DsclusterError as exc:
        # No spec anywhere is normal on a workstation; a broken explicit one is shown to the user.
        return local_view(error=exc.to_dict() if arg else None)
    nodes = [{"name": n.name, "address": n.address, "slots": n.slots} for n in spec.nodes]
    return ClusterView(name=spec.name, shared_dir=Path(spec.shared_dir), nodes=nodes, source="spec",
                       spec_path=str(spec.path) if getattr(spec, "path", None) else None, spec=spec,
                       explicit=bool(arg))


class NodeSampler:
    """Samples the local node at most once per `min_interval` (many browser tabs poll at once)."""

    def __init__(self, min_interval: float = 1.0) -> None:
        self._sampler: nodestats.Sampler | None = None
        self._last: dict | None = None
        self._min_interval = min_interval
        # The server's own node needs no agent, so its history is kept here, in memory.
        self.history: collections.deque = collections.deque(maxlen=nodestats.HISTORY_POINTS)

    def local(self, node: str) -> dict:
        if self._sampler is None:
            self._sampler = nodestats.Sampler()
        if self._last is None or time.time() - self._last["time"] >= self._min_interval:
            self._last = self._sampler.sample(node)
            if self._last["gpus"]:
                self.history.append(self._last)
        sample = dict(self._last, node=node, age_s=0.0, stale=False, source="server")
        return sample


def describe(view: ClusterView, sampler: NodeSampler) -> dict:
    nodes = []
    for node in view.nodes:
        local = view.source == "local" or is_local_address(node["address"])
        if local:
            sample = sampler.local(node["name"])
            history = list(sampler.history)
        else:
            sample = nodestats.read_published(view.shared_dir, node["name"])
            if sample is not None:
                sample["source"] = "agent"
            history = nodestats.read_history(nodestats.history_path(view.shared_dir, node["name"]))
        gpus = (sample or {}).get("gpus") or []
        nodes.append(dict(node, local=local, sample=sample, gpu_count=len(gpus),
                          history=nodestats.gpu_series(history)))
    return {
        "name": view.name,
        "source": view.source,
        "spec_path": view.spec_path,
        "shared_dir": str(view.shared_dir),
        "world_size": sum(n["slots"] or 1 for n in view.nodes),
        "nodes": nodes,
        "error": view.error,
    }

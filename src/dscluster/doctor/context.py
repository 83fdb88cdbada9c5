"""What every check reads: the spec, each node's probe facts, and the options doctor ran with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dscluster.doctor.probe import ProbeOutcome


@dataclass
class DoctorContext:
    spec: Any  # dscluster.cluster.spec.ClusterSpec (duck-typed so unit tests can pass a small fake)
    outcomes: dict[str, ProbeOutcome]
    master_port: int
    expected_python: str
    wait_s: float = 5.0
    local_env: dict[str, str] = field(default_factory=dict)
    hostkey_changed: list[str] = field(default_factory=list)  # published host key ≠ pinned one
    # The spec's launcher backend (launcher/backends), resolved once from the spec's name by the engine.
    backend: Any = None

    @property
    def master(self) -> Any:
        return self.spec.nodes[0]

    def node_name(self, node: Any) -> str:
        return node.name or node.address

    def facts(self, node: Any) -> dict | None:
        outcome = self.outcomes.get(self.node_name(node))
        return outcome.facts if outcome else None

    @property
    def master_facts(self) -> dict | None:
        return self.facts(self.master)

    def is_master(self, node: Any) -> bool:
        return self.node_name(node) == self.node_name(self.master)

    @property
    def gpu_mode(self) -> bool:
        """GPU mode when any reachable node has a GPU: then every node must have enough."""
        return any(((o.facts or {}).get("gpu") or {}).get("count", 0) > 0 for o in self.outcomes.values())

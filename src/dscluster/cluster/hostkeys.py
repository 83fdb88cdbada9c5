"""The cluster's pinned host keys (its own known_hosts, never ~/.ssh's): pinned on first sight from the node
agents' published records, only from records no other user could have written, and never silently
replaced: a node whose published key changed keeps its old pin, ssh refuses it ("Host key verification
failed"), and `dscluster config trust NODE` re-pins it on purpose."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dscluster.cluster.identity import cluster_state_dir, published_host_keys
from dscluster.cluster.runner import run_subprocess
from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.fsutil import atomic_write_text


def known_hosts_path(spec: ClusterSpec) -> Path:
    return cluster_state_dir(spec, create=False) / "known_hosts"


def read_known_hosts(spec: ClusterSpec) -> dict[str, str]:
    """{node name: "keytype blob"} from the cluster's known_hosts."""
    pins: dict[str, str] = {}
    try:
        text = known_hosts_path(spec).read_text(encoding="utf-8")
    except FileNotFoundError:
        return pins
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and not line.startswith("#"):
            pins[parts[0]] = f"{parts[1]} {parts[2]}"
    return pins


def write_known_hosts(spec: ClusterSpec, pins: dict[str, str]) -> None:
    body = "".join(f"{name} {key}\n" for name, key in pins.items())
    path = known_hosts_path(spec)
    try:
        if path.read_text(encoding="utf-8") == body:
            return  # unchanged: no rewrite under concurrent readers
    except FileNotFoundError:
        pass
    atomic_write_text(path, body, mode=0o600)


def published_keys_for(spec: ClusterSpec, *, trusted_only: bool = False) -> dict[str, str]:
    """{node name: "keytype blob"} published by node agents, matched by name or address (`trusted_only`:
    from records only this user and root could have written, see identity.published_host_keys)."""
    found: dict[str, str] = {}
    records = published_host_keys(spec.shared_dir, trusted_only=trusted_only)
    for node in spec.nodes:
        for rec in records:
            ids = {rec.get("name")} | set(rec.get("addresses") or [])
            if node.name in ids or node.address in ids:
                parts = rec["key"].split()
                if len(parts) >= 2:
                    found[node.name] = f"{parts[0]} {parts[1]}"
                    if rec.get("name") == node.name:
                        break
    return found


@dataclass
class HostKeySync:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # published key differs from the pin: NOT accepted
    missing: list[str] = field(default_factory=list)  # no published key and no pin
    # a key published only where the node user can write, and no pin: NOT accepted (pin it from the node)
    untrusted: list[str] = field(default_factory=list)


def sync_known_hosts(spec: ClusterSpec, *, trust: Sequence[str] = ()) -> HostKeySync:
    """Pin newly published host keys; re-pin only the nodes named in `trust`. Only records that no other
    user could have written are pinned (dscluster.trust): a key the node user could have published is
    never pinned, and one that disagrees with a pin is refused (`changed`)."""
    pins = read_known_hosts(spec)
    published = published_keys_for(spec)
    trusted = published_keys_for(spec, trusted_only=True)
    report = HostKeySync()
    for node in spec.nodes:
        key = published.get(node.name)
        if key is None:
            if node.name not in pins:
                report.missing.append(node.name)
            continue
        if trusted.get(node.name) != key:
            if node.name not in pins:
                report.untrusted.append(node.name)
            elif pins[node.name] != key:
                report.changed.append(node.name)
            continue
        if node.name not in pins:
            pins[node.name] = key
            report.added.append(node.name)
        elif pins[node.name] != key:
            if node.name in trust:
                pins[node.name] = key
                report.added.append(node.name)
            else:
                report.changed.append(node.name)
    write_known_hosts(spec, pins)
    return report


def fingerprint(key: str) -> str:
    """OpenSSH's SHA256 fingerprint of "keytype blob" (what `ssh-keygen -lf` and sshd's logs show)."""
    blob = base64.b64decode(key.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def scan_host_key(node: NodeSpec, timeout: int = 5) -> str | None:
    """The node's ed25519 host key as its sshd presents it now ("keytype blob"), or None.
    Trust on first use: only for nodes whose published key this machine cannot read."""
    result = run_subprocess(node.name, ["ssh-keyscan", "-T", str(timeout), "-p", str(node.ssh_port), "-t", "ed25519",
                                        node.address], timeout=timeout + 5)
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and not line.startswith("#"):
            return f"{parts[1]} {parts[2]}"
    return None


def pin_host_keys(spec: ClusterSpec, keys: dict[str, str]) -> None:
    pins = read_known_hosts(spec)
    pins.update(keys)
    write_known_hosts(spec, pins)

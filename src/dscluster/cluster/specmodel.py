"""The cluster spec's typed model: `ClusterSpec`, `NodeSpec`, their defaults and the keys a spec takes
(cluster/spec.py reads, writes and finds specs; cluster/specparse.py validates their text)."""


from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dscluster.errors import ConfigError
from dscluster.i18n import tr

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - exercised on 3.10 only
    pass

DEFAULT_SSH_PORT = 2222
DEFAULT_USER = "dscluster"
SPEC_FILENAME = "dscluster.toml"
SIM_RUNTIME_ROOT = Path("/run/dscluster/sims")  # where running simulated clusters keep their state

_CLUSTER_KEYS = ("name", "shared_dir", "ssh_user", "ssh_port", "launcher", "network_interface", "state_dir",
                 "python", "engine", "node_uid")
ENGINES = ("docker", "podman")  # the container engines `up`/`down` drive on the hosts
_NODE_KEYS = ("address", "slots", "name", "ssh_port")
_TOP_KEYS = ("cluster", "nodes", "users")
_PERSON_KEYS = ("name", "uid", "admin")
# UIDs for the people of a cluster: above the system and the usual first login UIDs (1000...), below the
# node image's node user (10001) and the nobody range.
PERSON_UID_MIN, PERSON_UID_MAX = 2000, 60000
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_USER_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")


@dataclass(frozen=True)
class NodeSpec:
    address: str
    slots: int
    name: str
    ssh_port: int = DEFAULT_SSH_PORT


@dataclass(frozen=True)
class UserSpec:
    """A person of the cluster (`dscluster user add`): an OS account with this name and UID on every node."""

    name: str
    uid: int
    admin: bool = False


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    nodes: tuple[NodeSpec, ...]
    shared_dir: Path
    ssh_user: str
    ssh_port: int = DEFAULT_SSH_PORT
    launcher: str = "pdsh"
    network_interface: str | None = None
    path: Path | None = None
    # The interpreter on the nodes (the node image's, e.g. /opt/dscluster/venv/bin/python). DeepSpeed's
    # runner starts the launching interpreter's own path on every node, so a launch from a machine with
    # another Python (a controller outside the containers) must name the nodes' one. None: the same path
    # as the launching interpreter (bare metal, one venv on shared storage).
    python: str | None = None
    # The container engine on the hosts (`up`, `down`); None: docker, unless --engine/DSCLUSTER_ENGINE.
    engine: str | None = None
    # The node user's UID on the nodes (the image's, e.g. 10001): a run directory made by root on the
    # controller is handed to it so the ranks can write there. None: the UID of a local ssh_user.
    node_uid: int | None = None
    # Where the identity, ssh_config and known_hosts live; None = <home>/clusters/<name>/.
    # The simulated cluster sets it so its spec is self-contained.
    state_dir: Path | None = field(default=None, compare=False)
    # The people of the cluster ([[users]] tables, `dscluster user add`), in the order they were added.
    users: tuple[UserSpec, ...] = ()

    @property
    def master(self) -> NodeSpec:
        return self.nodes[0]

    @property
    def world_size(self) -> int:
        return sum(n.slots for n in self.nodes)

    def node(self, name_or_address: str) -> NodeSpec:
        for n in self.nodes:
            if name_or_address in (n.name, n.address):
                return n
        raise ConfigError(tr("no node {node!r} in cluster {cluster!r}", node=name_or_address, cluster=self.name),
                          tr("choose one of: {names}", names=", ".join(n.name for n in self.nodes)), setting="nodes")

    def person(self, name: str) -> UserSpec | None:
        return next((u for u in self.users if u.name == name), None)

    def hostfile_text(self) -> str:
        from dscluster.cluster.hostfile import format_hostfile

        return format_hostfile([(n.name, n.slots) for n in self.nodes])

    def to_dict(self) -> dict:
        return {
            "name": self.name, "shared_dir": str(self.shared_dir), "ssh_user": self.ssh_user,
            "ssh_port": self.ssh_port, "launcher": self.launcher, "network_interface": self.network_interface,
            "python": self.python, "engine": self.engine, "node_uid": self.node_uid,
            "path": str(self.path) if self.path else None, "state_dir": str(self.state_dir) if self.state_dir else None,
            "world_size": self.world_size,
            "nodes": [{"name": n.name, "address": n.address, "slots": n.slots, "ssh_port": n.ssh_port}
                      for n in self.nodes],
            "users": [{"name": u.name, "uid": u.uid, "admin": u.admin} for u in self.users],
        }

    @classmethod
    def from_dict(cls, data: dict) -> ClusterSpec:
        """The inverse of `to_dict` (a run record keeps the spec its run was launched on this way)."""
        return cls(name=str(data["name"]), shared_dir=Path(data["shared_dir"]), ssh_user=str(data["ssh_user"]),
                   ssh_port=int(data["ssh_port"]), launcher=str(data.get("launcher") or "pdsh"),
                   network_interface=data.get("network_interface"),
                   python=data.get("python"), engine=data.get("engine"),
                   node_uid=int(data["node_uid"]) if data.get("node_uid") is not None else None,
                   path=Path(data["path"]) if data.get("path") else None,
                   state_dir=Path(data["state_dir"]) if data.get("state_dir") else None,
                   nodes=tuple(NodeSpec(address=str(n["address"]), slots=int(n["slots"]), name=str(n["name"]),
                                        ssh_port=int(n["ssh_port"])) for n in data["nodes"]),
                   users=tuple(UserSpec(name=str(u["name"]), uid=int(u["uid"]), admin=bool(u.get("admin")))
                               for u in data.get("users") or ()))

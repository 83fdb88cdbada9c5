"""Names and addresses of a simulated cluster: deterministic from its name, so a later `up` or
`down` finds what a killed process left behind, and short enough for Linux interface names (≤ 15)."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dscluster.cluster.spec import SIM_RUNTIME_ROOT
from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr

NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
# root-owned, not world-writable (sshd StrictModes), gone on reboot
RUNTIME_ROOT = SIM_RUNTIME_ROOT
FIRST_NODE_HOST = 10  # node i gets host number 10 + i; .1 is the bridge (the controller's side)
MAX_NODES = 200


def check_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise UsageError(tr("{name!r} is not a valid simulated-cluster name", name=name),
                         tr("use 1-20 lower-case letters, digits or '-', starting with a letter, e.g. --name h3test"))
    return name


@dataclass(frozen=True)
class SimNames:
    name: str

    @property
    def tag(self) -> str:
        return hashlib.sha1(self.name.encode()).hexdigest()[:6]

    @property
    def bridge(self) -> str:
        return f"dsb{self.tag}"

    def veth(self, i: int) -> str:
        return f"dsv{self.tag}{i}"

    def netns(self, i: int) -> str:
        return f"dsc-{self.name}-node{i}"

    @property
    def netns_prefix(self) -> str:
        return f"dsc-{self.name}-node"

    @staticmethod
    def node(i: int) -> str:
        return f"node{i}"

    @property
    def runtime_dir(self) -> Path:
        return RUNTIME_ROOT / self.name

    def node_state_dir(self, i: int) -> Path:
        return self.runtime_dir / "nodes" / self.node(i)


def check_tag_unique(name: str) -> None:
    """Interface names carry a 6-hex hash of the cluster name; two names with the same hash would
    share a bridge. Refuse the (unlikely) second one rather than tear down the first."""
    tag = SimNames(name).tag
    if not RUNTIME_ROOT.is_dir():
        return
    for state in RUNTIME_ROOT.glob("*/state.json"):
        other = state.parent.name
        if other != name and SimNames(other).tag == tag:
            raise UsageError(tr("the name {name!r} maps to the same interface names as the running cluster {other!r}",
                                name=name, other=other), tr("choose another --name"))


def check_subnet(text: str, n: int) -> ipaddress.IPv4Network:
    try:
        net = ipaddress.IPv4Network(text, strict=True)
    except ValueError as err:
        raise UsageError(tr("--subnet {subnet!r} is not an IPv4 network: {err}", subnet=text, err=err),
                         tr("use a private CIDR such as 10.201.0.0/24")) from None
    if not net.is_private:
        raise UsageError(tr("--subnet {subnet} is not a private range", subnet=text),
                         tr("use a private CIDR such as 10.201.0.0/24"))
    if net.num_addresses - 2 < FIRST_NODE_HOST + n:
        raise UsageError(tr("--subnet {subnet} is too small for {n} nodes", subnet=text, n=n),
                         tr("use a /24 (up to {max} nodes)", max=MAX_NODES))
    return net


def node_ip(net: ipaddress.IPv4Network, i: int) -> str:
    return str(net.network_address + FIRST_NODE_HOST + i)


def bridge_ip(net: ipaddress.IPv4Network) -> str:
    return str(net.network_address + 1)


def networks_in_use(exclude_bridge: str | None = None) -> list[ipaddress.IPv4Network]:
    """Every IPv4 network this machine's root namespace already has an address or a route in."""
    used: list[ipaddress.IPv4Network] = []
    try:
        addrs = json.loads(subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True,
                                          timeout=10).stdout or "[]")
        routes = json.loads(subprocess.run(["ip", "-j", "-4", "route", "show"], capture_output=True, text=True,
                                           timeout=10).stdout or "[]")
    except (OSError, ValueError, subprocess.SubprocessError):
        return used
    for link in addrs:
        if link.get("ifname") == exclude_bridge:
            continue
        for a in link.get("addr_info", []):
            if a.get("local") and a.get("prefixlen") is not None:
                used.append(ipaddress.IPv4Network(f"{a['local']}/{a['prefixlen']}", strict=False))
    for r in routes:
        dst = r.get("dst")
        if dst and dst != "default" and r.get("dev") != exclude_bridge:
            try:
                used.append(ipaddress.IPv4Network(dst if "/" in dst else f"{dst}/32", strict=False))
            except ValueError:
                pass
    return used


def sims_subnets(exclude: str) -> dict[str, ipaddress.IPv4Network]:
    """Subnets recorded by other simulated clusters on this machine (running or left behind)."""
    found = {}
    if RUNTIME_ROOT.is_dir():
        for state in RUNTIME_ROOT.glob("*/state.json"):
            if state.parent.name == exclude:
                continue
            try:
                found[state.parent.name] = ipaddress.IPv4Network(json.loads(state.read_text())["subnet"])
            except (OSError, ValueError, KeyError):
                continue
    return found


def choose_subnet(name: str, n: int, requested: str | None) -> ipaddress.IPv4Network:
    """The requested subnet (checked for overlaps) or the first free 10.2xx.y.0/24 derived from the name."""
    names = SimNames(name)
    taken = networks_in_use(exclude_bridge=names.bridge) + list(sims_subnets(name).values())
    if requested:
        net = check_subnet(requested, n)
        clash = next((t for t in taken if t.overlaps(net)), None)
        if clash:
            raise ConfigError(tr("--subnet {subnet} overlaps {other}, already used on this machine",
                                 subnet=net, other=clash),
                              tr("choose another private /24, e.g. 10.{a}.{b}.0/24", a=201, b=int(names.tag[:2], 16)),
                              setting="subnet")
        return net
    seed = int(names.tag, 16)
    for k in range(2000):
        value = (seed + k * 7919) % (40 * 256)
        net = ipaddress.IPv4Network(f"10.{200 + value // 256}.{value % 256}.0/24")
        if not any(t.overlaps(net) for t in taken):
            return net
    raise ConfigError(tr("no free private /24 for the simulated cluster"), tr("pass --subnet CIDR"), setting="subnet")

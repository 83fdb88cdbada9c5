"""The simulated cluster's network: one netns per node on a private bridge with no route out.

Each node: netns `dsc-<name>-node<i>`, a veth whose root-side end sits on the cluster's bridge and
whose node-side end is `eth0` (so DeepSpeed's hard-coded `btl_tcp_if_include eth0` for OpenMPI
works), address 10.x.y.(10+i), and only the subnet's own route. The bridge carries .1, so this
machine (the controller) reaches the nodes; ip_forward stays as it is and the nodes have no default
route, so nothing leaves the machine. All root-side changes are one `ip -batch` (fast: ~20 ms).
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from pathlib import Path

from dscluster.errors import ClusterError
from dscluster.i18n import tr
from dscluster.sim.names import SimNames, bridge_ip, node_ip

ETC_NETNS = Path("/etc/netns")


def _ip_batch(lines: list[str], *, netns: str | None = None, force: bool = False) -> subprocess.CompletedProcess:
    argv = ["ip"] + (["-n", netns] if netns else []) + (["-force"] if force else []) + ["-batch", "-"]
    return subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)


def create_batch(names: SimNames, net: ipaddress.IPv4Network, n: int) -> list[str]:
    """Root-namespace `ip -batch` lines: namespaces, bridge (with .1), one veth per node."""
    lines = [f"netns add {names.netns(i)}" for i in range(n)]
    lines += [f"link add {names.bridge} type bridge forward_delay 0 stp_state 0",
              f"addr add {bridge_ip(net)}/{net.prefixlen} dev {names.bridge}",
              f"link set {names.bridge} up"]
    for i in range(n):
        lines += [f"link add {names.veth(i)} type veth peer name eth0 netns {names.netns(i)}",
                  f"link set {names.veth(i)} master {names.bridge} up"]
    return lines


def node_batch(net: ipaddress.IPv4Network, i: int) -> list[str]:
    """In-namespace lines for node i: loopback, address (its only route is the subnet's), link up."""
    return ["link set lo up", f"addr add {node_ip(net, i)}/{net.prefixlen} dev eth0", "link set eth0 up"]


def hosts_text(net: ipaddress.IPv4Network, n: int, name: str) -> str:
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
             f"{bridge_ip(net)}\tdscluster-controller"]
    lines += [f"{node_ip(net, i)}\t{SimNames.node(i)}" for i in range(n)]
    return f"# simulated cluster {name!r} (dscluster sim)\n" + "\n".join(lines) + "\n"


def write_etc_netns(names: SimNames, net: ipaddress.IPv4Network, n: int) -> None:
    """/etc/netns/<ns>/{hosts,resolv.conf}: `ip netns exec` bind-mounts them over /etc for the node.
    resolv.conf points at 127.0.0.1, where nothing answers, so no lookup ever leaves the node."""
    text = hosts_text(net, n, names.name)
    for i in range(n):
        folder = ETC_NETNS / names.netns(i)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "hosts").write_text(text, encoding="utf-8")
        (folder / "resolv.conf").write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", encoding="utf-8")


def create(names: SimNames, net: ipaddress.IPv4Network, n: int) -> None:
    write_etc_netns(names, net, n)
    proc = _ip_batch(create_batch(names, net, n))
    if proc.returncode != 0:
        raise ClusterError(tr("could not create the simulated network: {err}", err=proc.stderr.strip()),
                           tr("run `dscluster sim down --name {name}` and try again", name=names.name))
    for i in range(n):
        proc = _ip_batch(node_batch(net, i), netns=names.netns(i))
        if proc.returncode != 0:
            raise ClusterError(tr("could not configure {node}: {err}", node=names.node(i), err=proc.stderr.strip()),
                               tr("run `dscluster sim down --name {name}` and try again", name=names.name))


def existing_netns(names: SimNames) -> list[str]:
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
    try:
        listed = [e["name"] for e in json.loads(out or "[]")]
    except ValueError:
        listed = []
    return sorted(ns for ns in listed if ns.startswith(names.netns_prefix) and ns[len(names.netns_prefix):].isdigit())


def existing_links(names: SimNames) -> list[str]:
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, timeout=10).stdout
    try:
        links = [e["ifname"] for e in json.loads(out or "[]")]
    except ValueError:
        links = []
    veth_prefix = names.veth(0)[:-1]
    return [link for link in links
            if link == names.bridge or (link.startswith(veth_prefix) and link[len(veth_prefix):].isdigit())]


def netns_pids(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10).stdout
    return [int(p) for p in out.split() if p.isdigit()]


def destroy(names: SimNames) -> None:
    """Delete the veths (explicitly: netns teardown is asynchronous), namespaces, bridge, /etc/netns."""
    namespaces = existing_netns(names)
    links = existing_links(names)
    lines = [f"link del {link}" for link in links if link != names.bridge]
    lines += [f"netns del {ns}" for ns in namespaces]
    if names.bridge in links:
        lines.append(f"link del {names.bridge}")
    if lines:
        _ip_batch(lines, force=True)
    for folder in ETC_NETNS.glob(f"{names.netns_prefix}*"):
        for f in folder.iterdir():
            f.unlink(missing_ok=True)
        folder.rmdir()


def set_link(names: SimNames, i: int, up: bool) -> None:
    proc = subprocess.run(["ip", "-n", names.netns(i), "link", "set", "eth0", "up" if up else "down"],
                          capture_output=True, text=True, timeout=10)
    if proc.returncode != 0:
        raise ClusterError(tr("could not set {node}'s link {state}: {err}", node=names.node(i),
                              state="up" if up else "down", err=proc.stderr.strip()),
                           tr("is the simulated cluster up? dscluster sim status --name {name}", name=names.name),
                           node=names.node(i))


def link_is_up(names: SimNames, i: int) -> bool:
    out = subprocess.run(["ip", "-n", names.netns(i), "-j", "link", "show", "eth0"], capture_output=True,
                         text=True, timeout=10).stdout
    try:
        return "UP" in json.loads(out)[0].get("flags", [])
    except (ValueError, IndexError, KeyError):
        return False


def _tc(argv: list[str], netns: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["tc"] + (["-n", netns] if netns else []) + argv, capture_output=True, text=True,
                          timeout=10)


def shape_argv(dev: str, rate: str | None, delay: str | None) -> list[str]:
    """`tc qdisc replace` for one device: tbf for a rate alone; netem for a delay (with its own rate)."""
    if delay:
        return ["qdisc", "replace", "dev", dev, "root", "netem", "delay", delay] + (["rate", rate] if rate else [])
    return ["qdisc", "replace", "dev", dev, "root", "tbf", "rate", str(rate), "burst", "64kb", "latency", "400ms"]


def shape(names: SimNames, i: int, rate: str | None, delay: str | None = None) -> None:
    """Slow node i's link both ways, like a degraded NIC or cable: the bridge side of its veth (what the
    node receives) and its eth0 (what it sends)."""
    for dev, ns in ((names.veth(i), None), ("eth0", names.netns(i))):
        proc = _tc(shape_argv(dev, rate, delay), ns)
        if proc.returncode != 0:
            err = proc.stderr.strip()
            hint = (tr("this kernel lacks the netem qdisc (sch_netem): slow it with --rate alone (tbf)")
                    if delay and "unknown" in err.lower() else tr("check the rate/delay (tc units: 100mbit, 20ms)"))
            raise ClusterError(tr("could not slow {node}'s link: {err}", node=names.node(i), err=err), hint,
                               node=names.node(i))


def unshape(names: SimNames, i: int) -> None:
    for dev, ns in ((names.veth(i), None), ("eth0", names.netns(i))):
        _tc(["qdisc", "del", "dev", dev, "root"], ns)  # none there: nothing to undo


def shaping(names: SimNames, i: int) -> str | None:
    """The root qdisc on node i's veth when it is tbf/netem (the node is slowed), else None."""
    out = _tc(["qdisc", "show", "dev", names.veth(i)]).stdout
    first = out.splitlines()[0] if out.strip() else ""
    return first.strip() if first.split()[1:2] in (["tbf"], ["netem"]) else None

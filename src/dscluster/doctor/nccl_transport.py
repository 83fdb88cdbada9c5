"""The transport NCCL really chose, read from its own report (NCCL_DEBUG=INFO, subsystems INIT,NET),
and doctor's verdict on it per node.

NCCL picks its network plugin once per process and says so (`NET/IB : Using [0]mlx5_0:1/IB ...`,
`NET/IB : No device found.`, `NET/Socket : Using [0]eth0:10.0.0.1<0>`, `Using network IB|Socket`),
then prints each channel's connection (`via P2P/IPC`, `via P2P/CUMEM`, `via P2P/direct pointer`,
`via SHM`, `via NET/IB/0/GDRDMA`, `via NET/Socket/1`, NVLS). A node whose InfiniBand/RoCE devices are
present in /sys/class/infiniband but which ends up on sockets trains at a fraction of the speed and
says nothing: that is a failed check, with the fix (the container's /dev/infiniband, NCCL_IB_HCA,
the GID index for RoCE, the interface).

Pure: `parse(text)` reads a node's output, `judge(...)` turns it and the node's probe facts into a
CheckResult. Real recorded NCCL output is in tests/data/nccl (with its sources).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from dscluster.doctor.model import CheckResult, failed, passed, warned
from dscluster.i18n import tr

CHECK = "transport"
# What doctor sets for the collective on GPU nodes: NCCL's choice of network and every connection.
DEBUG_ENV = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}

_IB_USING = re.compile(r"NET/IB\s*:\s*Using\s+(.*?)(?:;\s*OOB\s+(\S+))?\s*$")
_IB_DEV = re.compile(r"\[\d+\]([\w.-]+):(\d+)/(IB|RoCE)")
_SOCKET_USING = re.compile(r"NET/Socket\s*:\s*Using\s+(.*)$")
_SOCKET_IF = re.compile(r"\[\d+\]([\w.-]+):")
_NETWORK = re.compile(r"Using network (\w+)")
_VIA = re.compile(r"via (P2P/[\w/ ]+?|SHM(?:/[\w/]+)?|NET/(?:IB|Socket|[\w-]+)/\d+(?:/GDRDMA)?|NVLS|CollNet\S*)\s*$")
_HCA = re.compile(r"NCCL_IB_HCA set to (\S+)")
_PLUGIN = re.compile(r"NET/Plugin\s*:?\s*(?:Loaded net plugin (.*?)(?:\s*\(v\d+\))?$|.*?(No plugin found))")


@dataclass
class Transport:
    """What one node's NCCL output says."""

    network: str | None = None  # "IB" | "Socket" | a plugin's name; None: no inter-node network set up
    ib_devices: list[str] = field(default_factory=list)  # "mlx5_0:1/IB", "mlx5_10:1/RoCE"
    ib_no_device: bool = False  # `NET/IB : No device found`
    socket_ifaces: list[str] = field(default_factory=list)
    ib_hca: str | None = None
    vias: set[str] = field(default_factory=set)  # "P2P", "SHM", "NET/IB", "NET/IB/GDRDMA", "NET/Socket", "NVLS"
    nvls_available: bool = False
    plugin: str | None = None
    lines: int = 0  # NCCL INFO lines seen (0: NCCL_DEBUG output missing)

    @property
    def roce(self) -> bool:
        return any(d.endswith("/RoCE") for d in self.ib_devices)

    @property
    def inter_node(self) -> str | None:
        """The kind of network between nodes NCCL used: "IB", "RoCE", "Socket", or None."""
        used_ib = "NET/IB" in self.vias or "NET/IB/GDRDMA" in self.vias
        used_socket = "NET/Socket" in self.vias
        if used_ib or (self.network == "IB" and not used_socket):
            return "RoCE" if self.roce else "IB"
        if used_socket or self.network == "Socket":
            return "Socket"
        return self.network

    @property
    def intra_node(self) -> list[str]:
        return sorted(v for v in self.vias if v in ("P2P", "SHM", "NVLS"))

    def describe(self, multi_node: bool = True) -> str:
        """What NCCL chose, in words; on one node the network it set up carries nothing, so only what
        connects the GPUs is said."""
        parts = []
        net = self.inter_node if multi_node else None
        if net in ("IB", "RoCE"):
            gdr = " + GPUDirect RDMA" if "NET/IB/GDRDMA" in self.vias else ""
            parts.append(f"{'InfiniBand' if net == 'IB' else 'RoCE'}{gdr} ({', '.join(self.ib_devices) or '?'})")
        elif net == "Socket":
            parts.append(tr("TCP sockets ({ifaces})", ifaces=", ".join(self.socket_ifaces) or "?"))
        elif net:
            parts.append(net)
        names = {"P2P": "NVLink/PCIe P2P", "SHM": tr("shared memory"), "NVLS": "NVLink SHARP (NVLS)"}
        inside = [names[v] for v in self.intra_node]
        if inside:
            parts.append(tr("inside the node: {what}", what=", ".join(inside)))
        if not parts and not multi_node:
            return tr("one node: NCCL needs no network (NCCL INFO lines: {n})", n=self.lines)
        return "; ".join(parts) or tr("no transport reported")


def parse(text: str) -> Transport:
    t = Transport()
    for raw in text.splitlines():
        if "NCCL INFO" not in raw and "NCCL version" not in raw:
            continue
        line = raw.split("NCCL INFO", 1)[-1].strip()
        t.lines += 1
        if m := _IB_USING.search(line):
            for dev, port, kind in _IB_DEV.findall(m.group(1)):
                label = f"{dev}:{port}/{kind}"
                if label not in t.ib_devices:
                    t.ib_devices.append(label)
        elif "NET/IB" in line and "No device found" in line:
            t.ib_no_device = True
        elif m := _SOCKET_USING.search(line):
            for iface in _SOCKET_IF.findall(m.group(1)):
                if iface not in t.socket_ifaces:
                    t.socket_ifaces.append(iface)
        if m := _NETWORK.search(line):
            t.network = m.group(1)
        if m := _HCA.search(line):
            t.ib_hca = m.group(1)
        if "NVLS multicast support is available" in line:
            t.nvls_available = True
        if "Connected NVLS" in line:
            t.vias.add("NVLS")
        if m := _PLUGIN.search(line):
            t.plugin = m.group(1) or t.plugin
        if m := _VIA.search(line):
            via = m.group(1)
            if via.startswith("P2P"):
                t.vias.add("P2P")
            elif via.startswith("SHM"):
                t.vias.add("SHM")
            elif via.startswith("NET/IB"):
                t.vias.add("NET/IB/GDRDMA" if via.endswith("GDRDMA") else "NET/IB")
            elif via.startswith("NET/Socket"):
                t.vias.add("NET/Socket")
            elif via.startswith("NVLS"):
                t.vias.add("NVLS")
            elif via.startswith("NET/"):
                t.vias.add("NET/" + via.split("/")[1])
    if t.network is None and (t.ib_devices or t.socket_ifaces):  # NCCL before 2.12 has no `Using network`
        t.network = "IB" if t.ib_devices else "Socket"  # it prefers IB whenever it found a device
    return t


def _active_ib(rdma: Mapping | None) -> list[str]:
    """The node's IB/RoCE devices with an ACTIVE port, as "name:port/IB|RoCE" (from the probe's rdma facts)."""
    out = []
    for dev in (rdma or {}).get("devices") or []:
        for port in dev.get("ports") or []:
            state = str(port.get("state") or "")
            if "ACTIVE" in state.upper():
                kind = "RoCE" if str(port.get("link_layer") or "").lower() == "ethernet" else "IB"
                out.append(f"{dev.get('name')}:{port.get('port')}/{kind}")
    return out


def judge(node: str, t: Transport, facts: Mapping | None, *, multi_node: bool, iface: str | None = None) -> CheckResult:
    """The per-node verdict: IB present but unused (or unreachable from the container) fails, with the fix."""
    rdma = (facts or {}).get("rdma") or {}
    env = (facts or {}).get("env") or {}
    present = _active_ib(rdma)
    net = t.inter_node
    details = {"network": net, "ib_devices": t.ib_devices, "socket_ifaces": t.socket_ifaces, "vias": sorted(t.vias),
               "host_ib_devices": present, "dev_infiniband": rdma.get("dev_infiniband"), "nccl_lines": t.lines}
    if t.lines == 0:
        return warned(node, CHECK, tr("NCCL printed nothing about its transport (NCCL_DEBUG output missing)"),
                      tr("rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and look for `Using network`"),
                      **details)
    text = t.describe(multi_node)
    if multi_node and present and net not in ("IB", "RoCE"):
        roce = any(p.endswith("/RoCE") for p in present)
        if not rdma.get("dev_infiniband") or not rdma.get("uverbs"):
            fix = tr("the container cannot open the IB devices: run it with --device /dev/infiniband (and "
                     "--cap-add IPC_LOCK --ulimit memlock=-1), or mount /dev/infiniband into it")
            why = tr("{devs} present on the host, but /dev/infiniband is missing in the container", devs=", ".join(present))
        else:
            hcas = ",".join(p.split("/")[0] for p in present)
            fix = tr("point NCCL at the HCAs: NCCL_IB_HCA={hcas}; remove NCCL_IB_DISABLE=1 if set; ", hcas=hcas)
            if roce:
                fix += tr("for RoCE set the GID index (NCCL_IB_GID_INDEX=3 for RoCE v2 on most setups: check "
                          "`show_gids`); ")
            fix += tr("NCCL_SOCKET_IFNAME={iface} only picks the bootstrap interface", iface=iface or "<iface>")
            why = tr("{devs} active here, but NCCL did not use them", devs=", ".join(present))
            if env.get("NCCL_IB_DISABLE") not in (None, "", "0"):
                why += tr(" (NCCL_IB_DISABLE={v} is set)", v=env.get("NCCL_IB_DISABLE"))
        return failed(node, CHECK, tr("{what}: {why}", what=text, why=why), fix, **details)
    if multi_node and net == "Socket":
        return warned(node, CHECK, tr("{what}: no InfiniBand/RoCE device on this node", what=text),
                      tr("fine for Ethernet clusters; with IB/RoCE hardware install its driver (rdma-core, the "
                         "HCA's kernel module) so /sys/class/infiniband lists it"), **details)
    return passed(node, CHECK, text, **details)

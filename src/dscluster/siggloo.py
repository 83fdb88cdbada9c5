"""Failure signatures of gloo's own transport device, split from sigtorch.py's table (which splices them in this place,
so the order of the whole table is unchanged): its device factory given neither an interface nor a host name (round
104) and a host name that resolves to no address of this machine (round 141). Each pattern is the wording of the
component that prints it (torch/csrc/distributed/c10d/GlooDeviceFactory.cpp, gloo's transport/tcp/device.cc), never
one log's. The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

GLOO_SIGNATURES: tuple[Signature, ...] = (
    # Round 104: torch/csrc/distributed/c10d/GlooDeviceFactory.cpp's makeTCPDevice (Linux), makeTCPTLSDevice and
    # makeUVDevice (Windows, macOS) refuse to make gloo's transport device when both the interface name and the host
    # name they are given are empty: "GlooDeviceFactory::make{TCP,TCPTLS,UV}Device(): interface or hostname can't be
    # empty". ProcessGroupGloo passes the machine's own host name when GLOO_SOCKET_IFNAME names no interface, so an
    # empty host name (a Windows PC whose computer name is blank: Applio#137, the c10d client's "[]:PORT" before it)
    # ends there. Not the factory's other refusals ("makeDeviceForHostname(): unsupported gloo device", "UV transport
    # does not support lazy init"), nor the TCPStore's failed connections alone.
    _sig("gloo-hostname-empty", r"GlooDeviceFactory::make(?:TCP|TCPTLS|UV)Device\(\): interface or hostname can't be "
         r"empty",
         "gloo could not make its network device: it was given neither a network interface nor a host name. Without "
         "GLOO_SOCKET_IFNAME torch hands gloo the machine's own host name, and this machine's name is empty (seen on "
         "Windows PCs whose computer name is blank).",
         "Give the machine a host name (Windows: Rename-Computer in PowerShell, then reboot; Linux: hostnamectl "
         "set-hostname NAME) and check that `hostname` prints it, or name the interface gloo should use with "
         "GLOO_SOCKET_IFNAME on every rank. A restart fails the same way.", retry=False),
    # Round 141: gloo's transport/tcp/device.cc lookupAddrForHostname, which gloo runs when torch hands it the
    # machine's own host name (GLOO_SOCKET_IFNAME unset): it binds a socket to each address getaddrinfo gives for the
    # name and fails when none is usable here: `rp != nullptr. Unable to find address for: HOST` (before gloo#191, July
    # 2019), `bind_rv == 0. Unable to find address for HOST; bind(2) for [ADDR]:0 failed with: MSG` since (pipedream#32:
    # the name resolved to no address of the container's machine; naming the interface fixed it). Not
    # lookupAddrForIface's `ifa != nullptr. Unable to find address for: IFACE` (GLOO_SOCKET_IFNAME naming no interface
    # of this node: nccl-no-interface), nor a name that does not resolve at all (getaddrinfo's `rv == 0`).
    _sig("gloo-host-name-not-local", r"\brp != nullptr\. Unable to find address for: \S|"
         r"\bUnable to find address for [^\s;]+; bind\(2\) for \S+ failed with: ",
         "gloo was given no network interface (GLOO_SOCKET_IFNAME unset), so it looked up the machine's own host name "
         "and tried to bind to each address that name resolves to; none of them is usable on this machine: the name "
         "resolves (in /etc/hosts or DNS) to another or an old address, to the host's address inside a container "
         "with its own network, or only to IPv6 where IPv6 is off.",
         "Set GLOO_SOCKET_IFNAME to the interface that carries this node's training-network address (ip -br addr) "
         "on every node, or make `hostname` resolve to an address of this machine (an /etc/hosts line with its "
         "training-network IP). A restart fails the same way.", retry=False),
)

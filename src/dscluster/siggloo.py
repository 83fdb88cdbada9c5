"""Failure signatures of gloo's own transport device, split from sigtorch.py's table (which splices them in this place,
so the order of the whole table is unchanged): its device factory given neither an interface nor a host name (round
104) and a host name that resolves to no address of this machine (round 141); and (round 160) what its pairs say when
the ranks' collectives do not match. Each pattern is the wording of the
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
    # Round 160: gloo's transport/tcp/pair.cc, Pair's read of a message into the buffer of the operation this rank
    # posted: GLOO_ENFORCE_LE(op.preamble.length, op.nbytes), printed "[enforce fail at .../gloo/transport/tcp/
    # pair.cc:N] op.preamble.length <= op.nbytes. SENT vs EXPECTED" (a gloo::EnforceNotMet that terminates the
    # process); newer gloo (the one in torch 2.13's libtorch_cpu) adds "Received data size doesn't match expected size. Is
    # there a distributed collective mismatch in your code?". A peer sent more bytes than this
    # rank's collective expects: the ranks are in collectives of other sizes (another shape or dtype on one rank, or
    # one rank in another collective after skipping one; public code notes name uneven validation loaders, a broadcast of parameter
    # lists that differ by rank, async checkpoint collectives racing the training loop's). Not the peers' "Read error
    # ... Connection reset by peer" after the abort (gloo-peer-closed), nor pair.cc's other enforcements
    # (`op.nwritten == op.preamble.nbytes`, `op.preamble.roffset + op.preamble.length <= op.buf->size_`).
    _sig("collective-mismatch", r"\bop\.preamble\.length <= op\.nbytes\. \d+ vs \d+|Received data size doesn't match "
         r"expected size\. Is there a distributed collective mismatch",
         "A gloo collective received more data from a peer than this rank's own call expects: the ranks called "
         "collectives that do not match. The tensors differ between ranks in shape or dtype (a per-rank batch or "
         "metric of another length, a float on one rank and an integer on another, parameter lists that differ by "
         "rank), or one rank skipped a collective (one inside `if rank == 0:`, an uneven number of batches) and "
         "met its peers' next one.",
         "Make every rank call the same collectives in the same order with tensors of one shape and dtype: pad or "
         "trim per-rank tensors to one length (or all_gather their lengths first, or use all_gather_object), cast "
         "to one dtype, keep collectives out of rank-only branches, and give every rank the same number of steps "
         "(DistributedSampler, drop_last). TORCH_DISTRIBUTED_DEBUG=DETAIL checks the calls and names the one that "
         "differs. A restart fails the same way.", retry=False),
)

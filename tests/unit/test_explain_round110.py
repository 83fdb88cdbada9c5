"""Round 110's rules (issue 45), from threads about torchrun and torch elastic's rendezvous and agent: the rendezvous
store's host a bare number (a machine named by digits only, which torchrun --standalone announces as the store's host,
or a port or job id put where the address belongs; getaddrinfo reads it as a 32-bit IPv4 number) read as
numeric-host-name rather than a store out of reach in general; elastic-rdzv-closed's fix names torch's own closing of
the rendezvous by a leaving agent (pytorch/pytorch PR#117066, undone by PR#152525). A second wording of each, in
another version's or caller's words than the corpus case it was written from, and near misses that must not be read as
it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("numeric-host-name",)


@pytest.mark.parametrize("text", [
    # torch 2.x's store client (c10d socket.cpp: "The client socket has timed out after {} while trying to connect to
    # ({}, {})."), raised as DistNetworkError from the rendezvous handler; MASTER_PORT's value put in MASTER_ADDR
    ("  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py\", line 189, in "
     "_create_c10d_store\n    return TCPStore(\n"
     "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to "
     "(29500, 29500).\n"),
    # torch 1.13's wording of the same timeout, as the launcher's agent logs it (a Slurm job id as MASTER_ADDR)
    ("[E socket.cpp:860] [c10d] The client socket has timed out after 900s while trying to connect to (4821337, 29400)."
     "\n"),
    # torch 2.4+'s TCPStore client retry loop (TCPStore.cpp: "TCP client failed to connect/validate to host {}:{} -
    # retrying (try={}, timeout={}ms, delay={}ms): {}")
    ("[W301 10:03:11.219004127 TCPStore.cpp:358] [c10d] TCP client failed to connect/validate to host 1234567:29500 - "
     "retrying (try=0, timeout=900000ms, delay=496ms): The client socket has timed out after 900000ms while trying to "
     "connect to (1234567, 29500).\n"),
    # the every-address form (socket.cpp: "... failed to connect to any network address of ({}, {}).") after the
    # connect attempts to the number's address, torch 1.12's prefix
    ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [::ffff:0.18.214.135]:29500 (errno: 110 - "
     "Connection timed out).\n[E socket.cpp:610] [c10d] The client socket has failed to connect to any network "
     "address of (1234567, 29500).\n"),
])
def test_second_wordings(text):
    assert sig(text) == "numeric-host-name"


@pytest.mark.parametrize("text", [
    # pytorch/pytorch#107021: a dotted IP that did not answer
    ("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234\n"
     "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. "
     "See inner exception for details.\n"),
    # intel/torch-xpu-ops#2119: a host name
    ("torch.distributed.DistNetworkError: The client socket has timed out after 10000ms while trying to connect to "
     "(localhost, 44557).\n"),
    # mk-minchul/AdaFace#87: a loopback address
    ("TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 57388).\n"),
    # a host name that begins with digits (a rack-numbered node), and TCPStore's retry line to a dotted address
    ("[E socket.cpp:957] [c10d] The client socket has timed out after 600s while trying to connect to (01node, 29500)."
     "\n"),
    ("[W TCPStore.cpp:358] [c10d] TCP client failed to connect/validate to host 10.0.0.5:29500 - retrying (try=0, "
     "timeout=600000ms, delay=312ms): Connection refused\n"),
    # an IPv6 store address
    ("[E socket.cpp:610] [c10d] The client socket has failed to connect to any network address of (fd00::12, 29500).\n"),
])
def test_near_misses(text):
    assert sig(text) != "numeric-host-name"


def test_the_closed_rendezvous_names_torchs_own_closing():
    # pytorch/pytorch#150916: an agent stopped by SIGTERM closed the rendezvous for the node still running; fixed in
    # torch by PR#152525 (PR#117066 had added the closing)
    by_name = translated_and_final(("elastic-rdzv-closed",))
    assert "PR#152525" in by_name["elastic-rdzv-closed"].fix


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

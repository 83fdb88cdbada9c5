"""Round 104's rules (issue 45), from threads about multi-GPU training on desktops and workstations (Windows, WSL2,
consumer and workstation cards over PCIe): gloo's device factory given neither an interface nor a host name (a
Windows PC whose computer name is blank) read as gloo-hostname-empty rather than a generic Python error; NCCL's INFO
list of its socket interfaces, a bridge in it, no longer read as the cause of a run where no rank failed (a hang of
two RTX A6000s whose P2P went through the IOMMU); NCCL's notice that it found no libibverbs (NCCL before 2.12 says it
as a WARN on every node without InfiniBand) no longer taken for a failure. A second wording of each, in another
version's or caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain

NEW = ("gloo-hostname-empty",)

# NCCL_DEBUG=INFO of a rank that then hangs: NCCL 2.10's lines as ibvwrap.cc, net_socket.cc and init.cc print them (the
# host, pid and interface names are this test's own); no rank failed.
HANG = ("ws1:2211:2211 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "ws1:2211:2211 [0] NCCL INFO NET/Socket : Using [0]eno1:192.168.1.20<0> [1]docker0:172.17.0.1<0> "
        "[2]br-0a1b2c3d4e5f:172.18.0.1<0> [3]veth12ab34c:fe80::1c2d:3eff:fe4f:5a6b%veth12ab34c<0>\n"
        "ws1:2211:2211 [0] NCCL INFO Using network Socket\n"
        "NCCL version 2.10.3+cuda11.3\n"
        "ws1:2212:2212 [1] NCCL INFO Bootstrap : Using eno1:192.168.1.20<0>\n")


@pytest.mark.parametrize("text,expected", [
    # GlooDeviceFactory.cpp's makeTCPDevice (Linux builds) in the same words, under torch 2.x's rank prefix
    ("[rank1]: Traceback (most recent call last):\n"
     "[rank1]:   File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 1695, in "
     "_new_process_group_helper\n"
     "[rank1]:     backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, timeout=timeout)\n"
     "[rank1]: RuntimeError: GlooDeviceFactory::makeTCPDevice(): interface or hostname can't be empty\n",
     "gloo-hostname-empty"),
    # its TLS transport (makeTCPTLSDevice, GLOO_DEVICE_TRANSPORT=TCP_TLS): the same check, the same words
    ("RuntimeError: GlooDeviceFactory::makeTCPTLSDevice(): interface or hostname can't be empty\n",
     "gloo-hostname-empty"),
    # the interface list behind a failure still names the interface: NCCL's socket transport between two nodes using
    # a bridge (the wrapped form of the list, nvidia/nccl#697's shape), and torch's error after the one-line list
    ("ncclSystemError: System call (socket, malloc, munmap, etc) failed\n"
     "INFO NET/Socket : Using\n[0]eno1:10.0.0.11<0>\n[1]br-5e6f7a8b9c0d:172.19.0.1<0>\n", "nccl-wrong-interface"),
    (HANG + "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.10.3\n",
     "nccl-wrong-interface"),
    # the libibverbs notice before a rank's own error: the error answers
    ("ws1:2211:2211 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.11 GiB already "
     "allocated; 1.02 GiB free; 21.40 GiB reserved in total by PyTorch)\n", "cuda-oom"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # IAHispano/Applio#1019 (torch 2.7 on Windows): the factory's other refusal, a host name that resolves to no
    # local interface's address: not an empty name
    ("RuntimeError: makeDeviceForHostname(): unsupported gloo device\n", "gloo-hostname-empty"),
    # GlooDeviceFactory.cpp's next check in makeUVDevice
    ("RuntimeError: UV transport does not support lazy init\n", "gloo-hostname-empty"),
    # torch's store client on Windows, alone: the address it could not reach, not gloo's device
    ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [DESKTOP-7BNNAUJ]:29500 (system error: "
     "10049 - The requested address is not valid in its context.).\n", "gloo-hostname-empty"),
    # gloo's own TCP device given an interface that does not exist (GLOO_SOCKET_IFNAME=eth0 on a node without it)
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to "
     "find address for: eth0\n", "gloo-hostname-empty"),
    # a hang: NCCL's INFO list of interfaces with a bridge, and nothing failed
    (HANG, "nccl-wrong-interface"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_hang_with_only_nccl_notices_names_nothing():
    # no failure in the log: neither the interface list nor the libibverbs notice (as the first error line) is an answer
    assert explain.explain(HANG) is None


def test_other_nccl_warnings_are_still_errors():
    # a WARN of NCCL's InfiniBand verbs that did fail (ibvwrap.cc's call wrappers) is still read as an error
    found = explain.explain("node1:301:340 [0] misc/ibvwrap.cc:252 NCCL WARN Call to ibv_create_cq failed\n")
    assert found is not None and found.error and found.error["type"] == "NCCL WARN"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

"""Round 141's rules (issue 45), from threads of the network between nodes as the rendezvous and NCCL/gloo see it
(host names that resolve to loopback or to no address of the machine, unresolvable MASTER_ADDR names, RDMA ports of
different MTUs): gloo's own refusal when the machine's host name resolves to no address it can bind here
(gloo-host-name-not-local, from gloo's transport/tcp/device.cc lookupAddrForHostname). Each: a second wording (another
gloo version's words than the corpus case it was written from) and near misses, other components' text with like
words that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

NEW = ("gloo-host-name-not-local",)

_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/train.py", line 41, in <module>\n'
    '    dist.init_process_group(backend="gloo")\n'
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 1302, in '
    "_new_process_group_helper\n"
    "    backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, timeout=timeout)\n"
)


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


def test_the_refused_store_address_rule_is_translated_and_final():
    rule = _errno22_rule()
    assert rule.cause in FAILURES_ZH and rule.fix in FAILURES_ZH and not rule.retry


@pytest.mark.parametrize("text", [
    # gloo since gloo#191 (July 2019): the bind(2) that failed is named (an IPv4 address not on this machine)
    (_TRACE + "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] bind_rv == 0. "
     "Unable to find address for worker-1; bind(2) for [10.20.0.5]:0 failed with: Cannot assign requested address\n"),
    # the same, an IPv6 address the name resolves to, in a Horovod rank's std::terminate
    ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
     "  what():  [enforce fail at /tmp/pip-install/horovod/third_party/gloo/gloo/transport/tcp/device.cc:131] "
     "bind_rv == 0. Unable to find address for gpu-node-07.cluster; bind(2) for [2001:db8::17]:0 failed with: "
     "Cannot assign requested address\n"),
    # gloo before #191: no address of the name could be bound (`rp != nullptr`), a rank's RuntimeError
    (_TRACE + "RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:128] "
     "rp != nullptr. Unable to find address for: node03\n"),
])
def test_gloo_host_name_resolving_to_no_address_of_this_machine(text):
    assert sig(text) == "gloo-host-name-not-local"


@pytest.mark.parametrize("text,not_expected", [
    # gloo's lookupAddrForIface: GLOO_SOCKET_IFNAME names an interface this node lacks (or an exclusion list)
    (_TRACE + "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:88] ifa != nullptr. "
     "Unable to find address for: eth0\n", "gloo-host-name-not-local"),
    # gloo's pair.cc: a listening port taken, not the machine's address
    (_TRACE + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:176] bind: Address already in use\n",
     "gloo-host-name-not-local"),
    # TensorPipe's RPC agent falling back to loopback when the host name does not resolve: a warning, another component
    ("[W tensorpipe_agent.cpp:63] Failed to look up the IP address for the hostname (EAI_NONAME: unknown node or "
     "service), defaulting to 127.0.0.1\n", "gloo-host-name-not-local"),
    # NCCL's bootstrap finding no interface
    ("gpu617:22841:22841 [0] bootstrap.cc:37 NCCL WARN Bootstrap : no socket interface found\n",
     "gloo-host-name-not-local"),
    # torch's TCPStore server failing to bind its port
    ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in "
     "use).\n", "gloo-host-name-not-local"),
])
def test_not_a_gloo_host_name_without_a_local_address(text, not_expected):
    assert sig(text) != not_expected


def test_the_interface_path_stays_an_interface_missing():
    text = (_TRACE + "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:88] "
            "ifa != nullptr. Unable to find address for: eth0\n")
    assert sig(text) == "nccl-no-interface"


def _found(text):
    from dscluster import explain
    return explain.explain(text)


@pytest.mark.parametrize("text", [
    # pytorch#108047's shape: an IPv6 link-local rendezvous endpoint given without its %interface
    ("[I socket.cpp:691] [c10d - debug] The client socket will attempt to connect to an IPv6 address of "
     "(fe80::4315:8136:2e6:13f8, 29500).\n"
     "[W socket.cpp:665] [c10d] The client socket has failed to connect to [fe80::4315:8136:2e6:13f8]:29500 "
     "(errno: 22 - Invalid argument).\n"),
    # a host name c10d resolved and reverse-resolved, under the IPv6 lookup's warning (torch 2.x's timestamps)
    ("[W1008 23:40:22.781961348 socket.cpp:767] [c10d] The IPv6 network addresses of (trainer-0.internal, 29500) "
     "cannot be retrieved (gai error: -2 - Name or service not known).\n"
     "[W1008 23:40:22.836678340 socket.cpp:767] [c10d] The client socket has failed to connect to "
     "[trainer-0.internal]:29500 (errno: 22 - Invalid argument).\n"),
])
def test_a_store_address_the_kernel_refuses_to_connect_to_is_not_restarted(text):
    found = _found(text)
    assert found.signature == "master-unreachable" and not found.retry


@pytest.mark.parametrize("text", [
    # the name not served at all yet (a Kubernetes master pod not up): the IPv6 and IPv4 lookups fail, no connect
    ("[W socket.cpp:558] [c10d] The IPv6 network addresses of (job-master-0, 23456) cannot be retrieved (gai error: "
     "-2 - Name or service not known).\n"
     "[W socket.cpp:558] [c10d] The IPv4 network addresses of (job-master-0, 23456) cannot be retrieved (gai error: "
     "-2 - Name or service not known).\n"),
])
def test_a_master_name_not_served_yet_stays_restartable(text):
    found = _found(text)
    assert found.signature == "master-unreachable" and found.retry


def _errno22_rule():
    from dscluster import explain
    return next(s for s in explain.SIGNATURES if s.name == "master-unreachable" and "errno: 22" in s.pattern.pattern)


@pytest.mark.parametrize("text", [
    # a connect refused (nothing listening yet), not the kernel refusing the address
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-0]:29500 (errno: 111 - Connection "
    "refused).\n",
    # the store's server failing to bind, not a client's connect
    "[W socket.cpp:426] [c10d] The server socket has failed to bind to [fe80::1]:29500 (errno: 22 - Invalid "
    "argument).\n",
    # Windows' words for an address not valid as a destination (WSAEADDRNOTAVAIL), another errno and another fix
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to [DESKTOP-1]:29500 (system error: 10049 - "
    "The requested address is not valid in its context.).\n",
])
def test_not_a_store_address_refused_by_the_kernel(text):
    assert not _errno22_rule().pattern.search(text)

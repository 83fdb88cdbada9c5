"""Simulated-cluster naming and network builders (pure parts; the real thing is in tests/cluster)."""

from __future__ import annotations

import ipaddress

import pytest

from dscluster.errors import ConfigError, UsageError
from dscluster.sim import names, network
from dscluster.sim.names import SimNames


def test_interface_names_fit_linux_limit_and_are_deterministic():
    longest = SimNames("a" * 20)
    assert len(longest.bridge) <= 15 and len(longest.veth(199)) <= 15
    assert SimNames("x").bridge == SimNames("x").bridge != SimNames("y").bridge
    assert longest.netns(3) == "dsc-" + "a" * 20 + "-node3"


@pytest.mark.parametrize("bad", ["", "Default", "1abc", "a_b", "a" * 21, "a b"])
def test_bad_names(bad):
    with pytest.raises(UsageError, match="not a valid simulated-cluster name"):
        names.check_name(bad)


def test_subnet_checks():
    assert names.check_subnet("10.9.8.0/24", 3) == ipaddress.IPv4Network("10.9.8.0/24")
    for text, words in [("10.9.8.1/24", "not an IPv4 network"), ("8.8.8.0/24", "not a private"),
                        ("10.9.8.0/29", "too small")]:
        with pytest.raises(UsageError, match=words):
            names.check_subnet(text, 3)


def test_choose_subnet_skips_networks_in_use(monkeypatch, tmp_path):
    monkeypatch.setattr(names, "RUNTIME_ROOT", tmp_path)
    monkeypatch.setattr(names, "networks_in_use", lambda exclude_bridge=None: [])
    first = names.choose_subnet("abc", 3, None)
    assert first == names.choose_subnet("abc", 3, None) and first.prefixlen == 24 and first.subnet_of(
        ipaddress.IPv4Network("10.0.0.0/8"))
    monkeypatch.setattr(names, "networks_in_use", lambda exclude_bridge=None: [first])
    assert names.choose_subnet("abc", 3, None) != first
    with pytest.raises(ConfigError, match="overlaps"):
        names.choose_subnet("abc", 3, str(first))


def test_network_builders_exact():
    net = ipaddress.IPv4Network("10.250.1.0/24")
    sn = SimNames("t")
    assert network.create_batch(sn, net, 2) == [
        f"netns add {sn.netns(0)}", f"netns add {sn.netns(1)}",
        f"link add {sn.bridge} type bridge forward_delay 0 stp_state 0",
        f"addr add 10.250.1.1/24 dev {sn.bridge}", f"link set {sn.bridge} up",
        f"link add {sn.veth(0)} type veth peer name eth0 netns {sn.netns(0)}",
        f"link set {sn.veth(0)} master {sn.bridge} up",
        f"link add {sn.veth(1)} type veth peer name eth0 netns {sn.netns(1)}",
        f"link set {sn.veth(1)} master {sn.bridge} up"]
    assert network.node_batch(net, 1) == ["link set lo up", "addr add 10.250.1.11/24 dev eth0", "link set eth0 up"]
    hosts = network.hosts_text(net, 2, "t")
    assert "10.250.1.10\tnode0\n" in hosts and "10.250.1.11\tnode1\n" in hosts and "127.0.0.1\tlocalhost" in hosts

"""doctor --collective's link figures judged (doctor/bandwidth.py), its pair schedule, and NCCL's own
transport report parsed from real recorded output (tests/data/nccl, sources in SOURCES.md)."""

from __future__ import annotations

import importlib.util
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import pytest

from dscluster.doctor import bandwidth, nccl_transport
from dscluster.doctor.bandwidth import Link

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"


def script():
    from importlib import resources

    path = resources.files("dscluster.doctor") / "collective_script.py"
    spec = importlib.util.spec_from_file_location("collective_script_under_test", str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_pair_rounds_cover_every_pair_once_and_no_node_twice_in_a_round(n):
    rounds = script().pair_rounds(n)
    pairs = [p for r in rounds for p in r]
    assert sorted(pairs) == sorted(combinations(range(n), 2))
    for r in rounds:
        nodes = [x for p in r for x in p]
        assert len(nodes) == len(set(nodes))


def ring(gbs: dict[tuple[str, str], float]) -> list[Link]:
    return [Link("node", a, b, v) for (a, b), v in gbs.items()]


def test_a_slow_node_is_named_though_it_sits_on_most_links():
    # three nodes: node1 is on two of the three links, so the median link is slow; each node's best is not
    links = ring({("node0", "node1"): 0.006, ("node0", "node2"): 1.1, ("node1", "node2"): 0.0061})
    v = bandwidth.judge(links, 0.5)
    assert set(v.slow_nodes) == {"node1"} and not v.slow_links
    res = {(r.node, r.check): r for r in bandwidth.results(v, ["node0", "node1", "node2"])}
    bad = res[("node1", "bandwidth")]
    assert not bad.ok and "0.0061 GB/s at best" in bad.finding and "median" in bad.finding
    assert "node0 1.1" in bad.finding and "node0↔node1 0.006" in bad.finding and "exclude-unhealthy" in bad.fix
    assert res[("node0", "bandwidth")].ok and res[("node2", "bandwidth")].ok
    assert not res[("cluster", "bandwidth")].ok


def test_a_slow_link_between_two_good_nodes_is_named_not_the_nodes():
    nodes = [f"n{i}" for i in range(4)]
    figures = {p: 1.0 for p in combinations(nodes, 2)}
    figures[("n0", "n3")] = 0.1
    v = bandwidth.judge(ring(figures), 0.5)
    assert not v.slow_nodes and list(v.slow_links) == ["n0↔n3"]
    res = {(r.node, r.check): r for r in bandwidth.results(v, nodes)}
    assert not res[("n0", "bandwidth")].ok and "slow link n0↔n3" in res[("n0", "bandwidth")].finding
    assert res[("n1", "bandwidth")].ok


def test_healthy_cluster_passes_and_two_nodes_are_judged_against_their_baseline_only():
    v = bandwidth.judge(ring({("a", "b"): 0.9, ("a", "c"): 1.0, ("b", "c"): 0.8}), 0.5)
    assert v.ok and v.median == pytest.approx(1.0)
    two = ring({("a", "b"): 0.1})
    assert bandwidth.judge(two, 0.5).ok  # nobody to compare with
    v = bandwidth.judge(two, 0.5, baseline={"a": 1.0, "b": 1.0})
    assert set(v.slow_nodes) == {"a", "b"} and "baseline (1 GB/s)" in v.slow_nodes["a"]


def test_gpu_pairs_inside_nodes_are_judged_against_each_other():
    links = ring({("a", "b"): 1.0}) + [Link("gpu", "0", str(j), 300.0, node="a") for j in (1, 2, 3)] + \
        [Link("gpu", "0", "1", 20.0, node="b")]
    v = bandwidth.judge(links, 0.5)
    assert list(v.slow_links) == ["b GPU0↔GPU1"]
    res = {(r.node, r.check): r for r in bandwidth.results(v, ["a", "b"])}
    assert not res[("b", "bandwidth")].ok and res[("a", "bandwidth")].ok


def test_links_from_the_script_and_the_baseline_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path))
    data = [{"kind": "node", "a": 0, "b": 1, "gbs": 1.0}, {"kind": "gpu", "node": 1, "a": 0, "b": 1, "gbs": 9.0},
            {"kind": "node", "a": 7, "b": 1, "gbs": 1.0}, {"bogus": True}]
    links = bandwidth.links_from(data, ["x", "y"])
    assert links == [Link("node", "x", "y", 1.0), Link("gpu", "0", "1", 9.0, node="y")]
    spec = SimpleNamespace(name="c1", path=tmp_path / "dscluster.toml")
    path = bandwidth.baseline_path(spec)
    assert path.is_relative_to(tmp_path)
    kind = {"backend": "gloo", "link_mb": 4.0}
    for gbs in (1.0, 1.2, 0.8):
        hist = bandwidth.load_history(path)
        v = bandwidth.judge(ring({("x", "y"): gbs}), 0.5, bandwidth.baseline_from(hist, kind))
        bandwidth.record(path, hist, v, kind)
    assert bandwidth.baseline_from(bandwidth.load_history(path), kind) == {"x": 1.0, "y": 1.0}
    assert bandwidth.baseline_from(bandwidth.load_history(path), {"backend": "nccl", "link_mb": 4.0}) == {}
    slow = bandwidth.judge(ring({("x", "y"): 0.2}), 0.5, {"x": 1.0, "y": 1.0})
    bandwidth.record(path, bandwidth.load_history(path), slow, kind)  # slow figures never enter the baseline
    assert bandwidth.baseline_from(bandwidth.load_history(path), kind) == {"x": 1.0, "y": 1.0}
    path.write_text("{not json")
    assert bandwidth.load_history(path) == []


def parsed(name: str) -> nccl_transport.Transport:
    return nccl_transport.parse((DATA / name).read_text())


def test_nccl_reports_parsed_from_recorded_real_output():
    t = parsed("ib_no_device_socket.log")
    assert t.ib_no_device and t.inter_node == "Socket" and "P2P" in t.vias
    t = parsed("socket_aws.log")
    assert t.inter_node == "Socket" and t.socket_ifaces == ["ens3"]
    t = parsed("socket_forced.log")
    assert t.network == "Socket" and t.socket_ifaces == ["enp225s0f1"] and "TCP sockets (enp225s0f1)" in t.describe()
    t = parsed("roce_h100.log")
    assert t.inter_node == "RoCE" and t.ib_devices == ["mlx5_10:1/RoCE", "mlx5_11:1/RoCE"]
    t = parsed("ib_gdrdma.log")
    assert t.inter_node == "IB" and "NET/IB/GDRDMA" in t.vias and "GPUDirect RDMA" in t.describe()
    assert t.ib_hca == "mlx5_0,mlx5_1,mlx5_2,mlx5_3" and len(t.ib_devices) == 4
    t = parsed("ib_hca_nvls.log")
    assert t.inter_node == "IB" and t.nvls_available and t.ib_hca == "mlx5_2:1,mlx5_0:1"
    t = parsed("p2p_single_node.log")
    assert t.inter_node is None and t.intra_node == ["P2P"] and "NVLink/PCIe P2P" in t.describe()
    assert parsed("p2p_cumem.log").intra_node == ["P2P"]
    assert nccl_transport.parse("no nccl here").lines == 0


def ib_facts(dev: bool = True, layer: str = "InfiniBand", env: dict | None = None) -> dict:
    return {"rdma": {"devices": [{"name": "mlx5_0", "ports": [{"port": "1", "state": "4: ACTIVE",
                                                               "link_layer": layer}]}],
                     "dev_infiniband": dev, "uverbs": ["uverbs0"] if dev else []}, "env": env or {}}


def test_ib_present_but_sockets_used_fails_with_the_fix():
    t = parsed("ib_no_device_socket.log")
    r = nccl_transport.judge("node1", t, ib_facts(dev=False), multi_node=True)
    assert not r.ok and "/dev/infiniband is missing" in r.finding and "--device /dev/infiniband" in r.fix
    r = nccl_transport.judge("node1", t, ib_facts(env={"NCCL_IB_DISABLE": "1"}), multi_node=True, iface="ens3")
    assert not r.ok and "NCCL_IB_DISABLE=1" in r.finding and "NCCL_IB_HCA=mlx5_0:1" in r.fix
    assert "NCCL_SOCKET_IFNAME=ens3" in r.fix and "GID" not in r.fix
    r = nccl_transport.judge("node1", parsed("socket_aws.log"), ib_facts(layer="Ethernet"), multi_node=True)
    assert not r.ok and "NCCL_IB_GID_INDEX" in r.fix and "RoCE" in r.finding


def test_ib_used_passes_and_sockets_without_ib_hardware_only_warns():
    assert nccl_transport.judge("n", parsed("ib_gdrdma.log"), ib_facts(), multi_node=True).status == "ok"
    r = nccl_transport.judge("n", parsed("socket_forced.log"), {"rdma": {"devices": []}}, multi_node=True)
    assert r.status == "warn" and "no InfiniBand/RoCE device" in r.finding
    assert nccl_transport.judge("n", parsed("p2p_single_node.log"), {}, multi_node=False).status == "ok"
    assert nccl_transport.judge("n", nccl_transport.parse(""), {}, multi_node=True).status == "warn"
    one = nccl_transport.judge("n", parsed("socket_aws.log"), {}, multi_node=False)
    assert one.status == "ok" and "TCP" not in one.finding and "one node" in one.finding


def test_a_second_measurement_keeps_each_links_better_figure():
    # a hiccup slowed node1↔node2 in the first measurement only: the better figure clears it; a link slow
    # both times stays slow
    first = ring({("node0", "node1"): 2.8, ("node0", "node2"): 2.8, ("node1", "node2"): 1.2})
    second = ring({("node0", "node1"): 2.5, ("node0", "node2"): 2.9, ("node1", "node2"): 2.7})
    assert not bandwidth.judge(first + ring({("node0", "node3"): 2.8, ("node1", "node3"): 2.8,
                                              ("node2", "node3"): 2.8}), 0.5).ok
    both = bandwidth.best_of(first, second)
    assert [(lk.a, lk.b, lk.gbs) for lk in both] == [("node0", "node1", 2.8), ("node0", "node2", 2.9),
                                                      ("node1", "node2", 2.7)]
    assert bandwidth.judge(both, 0.5).ok
    slow = ring({("node0", "node1"): 0.01, ("node0", "node2"): 2.9, ("node1", "node2"): 0.011})
    again = ring({("node0", "node1"): 0.012, ("node0", "node2"): 2.7, ("node1", "node2"): 0.01})
    assert set(bandwidth.judge(bandwidth.best_of(slow, again), 0.5).slow_nodes) == {"node1"}
    gpu = [Link("gpu", "0", "1", 20.0, node="a")]
    assert bandwidth.best_of(gpu, [Link("gpu", "0", "1", 300.0, node="b")]) == gpu + [Link("gpu", "0", "1", 300.0,
                                                                                          node="b")]

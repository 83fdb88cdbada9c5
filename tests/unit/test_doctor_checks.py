"""Doctor's check logic on fake probe facts: every check can pass and can fail with a named fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dscluster.cluster.runner import CommandResult
from dscluster.cluster.spec import ClusterSpec as Spec
from dscluster.cluster.spec import NodeSpec as Node
from dscluster.doctor.checks_node import bad_arch_entries, fixed_arch_list
from dscluster.doctor.context import DoctorContext
from dscluster.doctor.engine import evaluate, summarize
from dscluster.doctor.model import CHECKS, Report
from dscluster.doctor.probe import ProbeOutcome, classify_failure, parse_probe_output
from dscluster.doctor.render import render
from dscluster.launcher import backends

GiB = 1024**3
PY = "/opt/venv/bin/python"


def make_spec(n=3, slots=1, **kw) -> Spec:
    kw.setdefault("shared_dir", Path("/shared"))
    kw.setdefault("ssh_user", "trainer")
    return Spec("lab", tuple(Node(f"10.0.0.{10 + i}", slots, f"node{i}") for i in range(n)), **kw)


def healthy_facts(spec: Spec, i: int, t: float = 1000.0) -> dict:
    node = spec.nodes[i]
    names = [n.name for n in spec.nodes]
    return {
        "time_start": t + 0.1, "time_end": t + 0.9, "node": node.name,
        "python": {"executable": PY, "realpath": PY, "version": "3.11.2", "expected": PY, "expected_exists": True},
        "packages": {"torch": "2.13.0+cpu", "deepspeed": "0.19.8", "dscluster": "0.1.0", "mpi4py": None},
        "torch_build": {"cuda": None, "version": "2.13.0+cpu"},
        "gpu": {"count": 0, "smi": False}, "cpus": 8,
        "shm": {"total": 8 * GiB, "free": 8 * GiB},
        "resolve": {"map": {**{n.address: [n.address] for n in spec.nodes}, **{n.name: [n.address] for n in spec.nodes}},
                    "hostname": node.name,
                    "hostname_ips": [node.address]},
        "route": {"source_ip": node.address, "iface": "eth0", "interfaces": ["eth0", "lo"]},
        "tools": {"pdsh": "/usr/bin/pdsh", "pdsh_modules": "rcmd modules: ssh,rsh,exec (default: rsh)",
                  "mpirun": None, "ssh": "/usr/bin/ssh"},
        "jit": {"roots": [], "locks": [], "compilers": []},
        "env": {"TORCH_CUDA_ARCH_LIST": None}, "deepspeed_env": {},
        "shared": ({"exists": True, "writable": True, "acks": names[1:], "fstype": "nfs4", "source": "nas:/x",
                    "space": {"total": 100 * GiB, "free": 50 * GiB}} if i == 0 else
                   {"exists": True, "writable": True, "master_nonce": True, "fstype": "nfs4", "source": "nas:/x",
                    "space": {"total": 100 * GiB, "free": 50 * GiB}}),
        "port_server": {"free": True, "connected": names} if i == 0 else {},
        "port_client": {"result": "ok"},
        "ssh_banners": {n: "ok" for n in names} if i == 0 else {},
    }


def outcome(name, facts, result=None, sent=1000.0, received=1001.0):
    return ProbeOutcome(name, facts, result or CommandResult(name, ("sh",), 0), sent, received)


def context(spec, facts_by_node, failures=None, **kw) -> DoctorContext:
    outs = {}
    for i, n in enumerate(spec.nodes):
        if failures and n.name in failures:
            outs[n.name] = outcome(n.name, None, failures[n.name])
        else:
            outs[n.name] = outcome(n.name, facts_by_node[i])
    return DoctorContext(spec=spec, outcomes=outs, master_port=29500, expected_python=PY, local_env=kw.pop("env", {}),
                         backend=backends.get(spec.launcher))


def run(spec, mutate=None, failures=None, env=None):
    facts = [healthy_facts(spec, i) for i in range(len(spec.nodes))]
    if mutate:
        mutate(facts)
    ctx = context(spec, facts, failures, env=env or {})
    return Report("lab", [n.name for n in spec.nodes], evaluate(ctx), summary=summarize(ctx))


def only_failure(report: Report):
    fails = report.failures
    assert len(fails) == 1, [(r.node, r.check, r.finding) for r in fails]
    return fails[0]


def test_healthy_cluster_is_all_green_and_complete():
    report = run(make_spec())
    assert report.ok, [(r.node, r.check, r.finding) for r in report.failures]
    assert {(r.node, r.check) for r in report.results} == {(f"node{i}", c) for i in range(3) for c in CHECKS}
    assert report.summary["socket_ifname"] == "eth0"
    assert report.summary["backend"] == "gloo"
    text = render(report)
    assert "node2" in text and "all 42 checks passed" in text and "NCCL_SOCKET_IFNAME=eth0" in text
    # a green cluster suggests a first run that needs no script or ds_config.json of the user's
    text = render(run(make_spec(path=Path("/etc/lab/dscluster.toml"))))
    assert "dscluster demo --cluster /etc/lab/dscluster.toml" in text.split("Next:")[1]


@pytest.mark.parametrize("stderr,timed_out,rc,kind", [
    ("ssh: connect to host 10.0.0.11 port 2222: Connection refused", False, 255, "refused"),
    ("ssh: connect to host 10.0.0.11 port 2222: Connection timed out", False, 255, "timeout"),
    ("", True, None, "timeout"),
    ("ssh: connect to host 10.0.0.11 port 2222: No route to host", False, 255, "unreachable"),
    ("@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@\nHost key verification failed.",
     False, 255, "hostkey-changed"),
    ("Host key verification failed.", False, 255, "hostkey-unknown"),
    ("trainer@10.0.0.11: Permission denied (publickey).", False, 255, "auth"),
    ("ssh: Could not resolve hostname gpu9: Name or service not known", False, 255, "dns"),
    ("Traceback ...\nValueError: boom", False, 1, "probe"),
])
def test_ssh_failures_are_classified(stderr, timed_out, rc, kind):
    result = CommandResult("node1", ("ssh",), rc, "", stderr, timed_out=timed_out)
    assert classify_failure(result).kind == kind


@pytest.mark.parametrize("stderr,words", [
    ("ssh: connect to host 10.0.0.11 port 2222: Connection refused", ["refused", "dscluster node start"]),
    ("WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!\nHost key verification failed.", ["CHANGED", "dscluster config trust node1"]),
    ("ssh: connect to host 10.0.0.11 port 2222: No route to host", ["partition", "network"]),
    ("trainer@10.0.0.11: Permission denied (publickey).", ["refused the cluster key", "cluster.pub"]),
])
def test_unreachable_node_is_named_once_and_other_checks_skip(stderr, words):
    spec = make_spec()
    report = run(spec, failures={"node1": CommandResult("node1", ("ssh",), 255, "", stderr)},
                 mutate=lambda f: f[0]["shared"].update(acks=["node2"]))
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node1", "ssh")
    for w in words:
        assert w in fail.finding + " " + fail.fix
    assert report.get("node1", "versions").status == "skip"
    assert report.get("node1", "reach").status == "ok"  # the master still reaches its sshd port
    assert report.get("node0", "shared").status == "ok"  # an unreachable peer is not the master's problem


def test_master_down_skips_cross_node_checks_without_blaming_others():
    spec = make_spec()
    report = run(spec, failures={"node0": CommandResult("node0", ("ssh",), None, "", "", timed_out=True)})
    assert [(r.node, r.check) for r in report.failures] == [("node0", "ssh")]
    assert report.get("node1", "shared").status == "skip"
    assert report.get("node2", "port").status == "skip"


def test_no_node_answering_does_not_claim_cpu_mode():
    # A GPU cluster whose hosts are all unreachable must not be summarized as "CPU (gloo)".
    spec = make_spec(2, slots=8)
    down = CommandResult("x", ("ssh",), 255, "", "ssh: Could not resolve hostname gpu01")
    report = run(spec, failures={"node0": down, "node1": down})
    assert report.summary["mode"] is None and report.summary["backend"] is None
    text = render(report)
    assert "Mode: unknown (no node answered), world size 16" in text
    assert "CPU" not in text and "gloo" not in text


@pytest.mark.parametrize("name,flag", [("default", ""), ("qa", " --name qa")])
def test_down_node_of_a_simulated_cluster_is_healed_with_sim_heal(dscluster_home, name, flag):
    from dscluster.cluster.spec import sim_spec_path

    down = CommandResult("node1", ("ssh",), 255, "", "ssh: connect to host 10.0.0.11 port 2222: Connection refused")
    sim = make_spec(path=sim_spec_path(name))
    object.__setattr__(sim, "name", name)
    fail = run(sim, failures={"node1": down}).get("node1", "ssh")
    assert fail.fix == f"simulated cluster: bring node1 back with `dscluster sim heal{flag} node1`"
    real = run(make_spec(path=dscluster_home / "dscluster.toml"), failures={"node1": down}).get("node1", "ssh")
    assert "dscluster node start" in real.fix


def test_versions_differ_from_master():
    report = run(make_spec(), lambda f: f[2]["packages"].update(deepspeed="0.18.0"))
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node2", "versions")
    assert "deepspeed 0.18.0" in fail.finding and "same image" in fail.fix


def test_missing_package_and_missing_python():
    report = run(make_spec(), lambda f: f[1]["packages"].update(torch=None))
    assert only_failure(report).check == "versions" and "torch" in report.failures[0].fix

    def no_python(f):
        f[1]["python"].update(expected_exists=False, executable="/usr/bin/python3")
    fail = only_failure(run(make_spec(), no_python))
    assert (fail.node, fail.check) == ("node1", "python") and PY in fail.finding


def test_gpu_node_with_fewer_gpus_than_slots():
    spec = make_spec(2, slots=8)

    def gpus(f):
        f[0]["gpu"] = {"count": 8, "smi": True, "names": ["H100"] * 8, "driver": "550.1"}
        f[1]["gpu"] = {"count": 4, "smi": True, "names": ["H100"] * 4, "driver": "550.1"}
        for x in f:
            x["packages"]["nvidia-nccl-cu12"] = "2.21.5"
            x["torch_build"]["cuda"] = "12.4"
    report = run(spec, gpus)
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node1", "slots")
    assert "4 GPU(s)" in fail.finding and "slots = 4" in fail.fix
    assert report.summary["backend"] == "nccl"
    assert "NCCL 2.21.5" in report.get("node0", "versions").finding


def test_cpu_node_with_more_slots_than_cores():
    spec = Spec("lab", (Node("10.0.0.10", 1, "node0"), Node("10.0.0.11", 64, "node1")), Path("/shared"), "trainer")
    fail = only_failure(run(spec))
    assert (fail.node, fail.check) == ("node1", "slots") and "CPU mode" in fail.finding and "slots ≤ 8" in fail.fix


def test_small_shm_fails_on_gpu_and_warns_on_cpu():
    report = run(make_spec(), lambda f: f[1]["shm"].update(total=64 * 1024**2))
    assert report.ok and report.get("node1", "shm").status == "warn"

    def gpu_small(f):
        for x in f:
            x["gpu"] = {"count": 1, "smi": True, "names": ["A100"], "driver": "550"}
        f[1]["shm"].update(total=64 * 1024**2)
    fail = only_failure(run(make_spec(), gpu_small))
    assert fail.check == "shm" and "--shm-size" in fail.fix


def test_leftover_deepspeed_shm_buffers_are_named_with_the_cleanup():
    report = run(make_spec(), lambda f: f[1]["shm"].update(ds_buffers=300, ds_buffer_bytes=300 * 69_206_024))
    shm = report.get("node1", "shm")
    assert report.ok and shm.status == "warn" and "300" in shm.finding and "19.3 GiB" in shm.finding
    assert "rm /dev/shm/deepspeed_allreduce_buffer_*" in shm.fix
    few = run(make_spec(), lambda f: f[1]["shm"].update(ds_buffers=2, ds_buffer_bytes=2 * 69_206_024))
    assert few.get("node1", "shm").status == "ok"  # a run's own live buffers are not leftovers worth a word


def test_shared_dir_not_the_same_on_one_node():
    def private(f):
        f[2]["shared"].update(master_nonce=False, fstype="ext4")
        f[0]["shared"]["acks"] = ["node1"]
    report = run(make_spec(), private)
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node2", "shared")
    assert "not the same directory" in fail.finding and "mount the same shared storage" in fail.fix
    assert report.get("node0", "shared").status == "warn"


def test_shared_dir_missing_unwritable_or_full():
    fail = only_failure(run(make_spec(), lambda f: f[1]["shared"].update(exists=False)))
    assert fail.check == "shared" and "does not exist" in fail.finding
    fail = only_failure(run(make_spec(), lambda f: f[1]["shared"].update(writable=False, write_error="EROFS")))
    assert "not writable" in fail.finding
    fail = only_failure(run(make_spec(), lambda f: f[0]["shared"]["space"].update(free=GiB // 10)))
    assert (fail.node, fail.check) == ("node0", "shared") and "free space" in fail.fix


def test_master_port_busy_and_unreachable():
    def busy(f):
        f[0]["port_server"] = {"free": False, "error": "[Errno 98] Address already in use",
                               "owner": {"pid": 4242, "cmdline": "python train.py"}}
        for x in f:
            x["port_client"] = {"result": "foreign"}
    report = run(make_spec(), busy)
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node0", "port")
    assert "29500" in fail.finding and "4242" in fail.finding and "--master-port" in fail.fix
    fail = only_failure(run(make_spec(), lambda f: f[2]["port_client"].update(result="timeout")))
    assert (fail.node, fail.check) == ("node2", "port") and "firewall" in fail.fix


def test_master_cannot_reach_a_node_sshd():
    fail = only_failure(run(make_spec(), lambda f: f[0]["ssh_banners"].update(node1="timeout")))
    assert (fail.node, fail.check) == ("node1", "reach") and "pdsh" in fail.finding


def test_clock_skew_beyond_uncertainty():
    def skew(f):
        f[1]["time_start"] += 30
        f[1]["time_end"] += 30
    fail = only_failure(run(make_spec(), skew))
    assert (fail.node, fail.check) == ("node1", "clock") and "+30.0 s" in fail.finding and "chrony" in fail.fix


def test_names_resolving_differently_or_not_at_all():
    fail = only_failure(run(make_spec(), lambda f: f[1]["resolve"]["map"].update({"10.0.0.12": ["10.9.9.9"]})))
    assert (fail.node, fail.check) == ("node1", "names") and "/etc/hosts" in fail.fix
    fail = only_failure(run(make_spec(), lambda f: f[2]["resolve"]["map"].update({"10.0.0.10": {"error": "x"}})))
    assert "cannot resolve 10.0.0.10" in fail.finding
    fail = only_failure(run(make_spec(), lambda f: f[2]["resolve"]["map"].update(node1=["10.0.0.99"])))
    assert (fail.node, fail.check) == ("node2", "names") and "node1 → 10.0.0.99 (≠ 10.0.0.11)" in fail.finding
    report = run(make_spec(), lambda f: f[2]["resolve"]["map"].update(node1={"error": "unknown"}))
    assert report.ok and report.get("node2", "names").status == "warn"


def test_stale_jit_lock_and_a_live_compile():
    lock = {"path": "/home/t/.cache/torch_extensions/py311_cpu/fused_adam/lock", "age_s": 900}
    fail = only_failure(run(make_spec(), lambda f: f[1]["jit"].update(locks=[lock])))
    assert (fail.node, fail.check) == ("node1", "jit-lock") and fail.fix == f"remove it: rm -f {lock['path']}"

    def compiling(f):
        f[1]["jit"].update(locks=[lock])
        f[0]["jit"].update(compilers=["ninja(77)"])
    report = run(make_spec(), compiling)
    assert report.ok and report.get("node1", "jit-lock").status == "warn"
    young = dict(lock, age_s=5)
    assert run(make_spec(), lambda f: f[1]["jit"].update(locks=[young])).get("node1", "jit-lock").status == "ok"
    recent = dict(lock, age_s=120)  # maybe a compile on a machine the probes cannot see
    report = run(make_spec(), lambda f: f[1]["jit"].update(locks=[recent]))
    assert report.ok and report.get("node1", "jit-lock").status == "warn" and "rm -f" in report.get("node1", "jit-lock").fix


def test_torch_cuda_arch_list_that_deepspeed_cannot_parse():
    assert bad_arch_entries("8.0;9.0a") == ["9.0a"]
    assert bad_arch_entries("7.5 8.6+PTX 9.0") == []
    assert fixed_arch_list("8.0;9.0a;10.0a+PTX") == "8.0;9.0;10.0+PTX"
    fail = only_failure(run(make_spec(), lambda f: f[2]["env"].update(TORCH_CUDA_ARCH_LIST="9.0a")))
    assert (fail.node, fail.check) == ("node2", "cuda-arch")
    assert "export TORCH_CUDA_ARCH_LIST=9.0" in fail.fix
    fail = only_failure(run(make_spec(), env={"TORCH_CUDA_ARCH_LIST": "8.0 9.0a"}))
    assert fail.node == "node0" and "doctor's environment" in fail.finding


def test_interface_differs_from_the_spec():
    spec = make_spec(network_interface="ib0")
    report = run(spec)
    assert {(r.node, r.check) for r in report.failures} == {("node1", "iface"), ("node2", "iface")}
    assert 'network_interface = "eth0"' in report.get("node1", "iface").fix


def test_launcher_tools():
    fail = only_failure(run(make_spec(), lambda f: f[0]["tools"].update(pdsh=None)))
    assert (fail.node, fail.check) == ("node0", "launcher") and "apt-get install pdsh" in fail.fix
    report = run(make_spec(launcher="openmpi"), lambda f: [x["tools"].update(mpirun="/usr/bin/mpirun") for x in f])
    assert {r.check for r in report.failures} == {"launcher"} and "mpi4py" in report.failures[0].fix


def test_json_and_text_report_name_node_check_and_fix():
    report = run(make_spec(), lambda f: f[1]["packages"].update(torch="2.0.0"))
    data = json.loads(json.dumps(report.to_dict()))
    bad = [r for r in data["results"] if r["status"] == "fail"]
    assert data["ok"] is False and bad[0]["node"] == "node1" and bad[0]["check"] == "versions" and bad[0]["fix"]
    text = render(report)
    assert "node1 · versions" in text and "fix:" in text and "1 check(s) failed on node1" in text


def test_parse_probe_output_ignores_login_noise():
    facts = {"node": "a"}
    out = "Welcome to the node!\nDSCLUSTER-PROBE " + json.dumps(facts) + "\n"
    assert parse_probe_output(out) == facts
    assert parse_probe_output("garbage") is None


def test_a_check_crashing_on_odd_data_is_reported_not_raised():
    report = run(make_spec(), lambda f: f[1].update(cpus="many"))
    fail = only_failure(report)
    assert (fail.node, fail.check) == ("node1", "slots") and "internal error" in fail.finding


def test_host_key_published_differently_from_the_pin_is_called_a_change():
    spec = make_spec()
    facts = [healthy_facts(spec, i) for i in range(3)]
    facts[0]["shared"]["acks"] = ["node2"]
    ctx = context(spec, facts, {"node1": CommandResult("node1", ("ssh",), 255, "", "Host key verification failed.")})
    ctx.hostkey_changed = ["node1"]
    fail = [r for r in evaluate(ctx) if not r.ok][0]
    assert (fail.node, fail.check) == ("node1", "ssh") and "CHANGED" in fail.finding
    assert "dscluster config trust node1" in fail.fix

"""doctor's Slurm checks: pure evaluation of recorded answers of Slurm's clients."""

from dscluster.launcher.backends.slurm import doctor as cs
from dscluster.launcher.backends.slurm.clients import SlurmAsk

UP = cs.Answer(0, "Slurmctld(primary) at node0 is UP\n")
SINFO = "sim*|up|infinite|n/a|node[0-2]\ngpu|up|1:00:00|30:00|gpu[01-02]\n"


def facts(**kw):
    base = dict(ping=UP, partitions=cs.parse_partitions(SINFO),
                node_states={"node0": "idle", "node1": "mix", "node2": "idle", "gpu01": "idle", "gpu02": "down*"},
                node_gpus={"gpu01": 8, "gpu02": 8}, munge={"node0": True, "node1": True, "node2": True})
    base.update(kw)
    return cs.SlurmFacts(**base)


def by(results, check, node=cs.SLURM_ROW):
    return next(r for r in results if r.check == check and r.node == node)


def test_sinfo_output_is_parsed():
    parts = cs.parse_partitions(SINFO)
    assert parts[0] == cs.Partition("sim", True, "infinite", "n/a", ("node0", "node1", "node2"), True)
    assert parts[1].nodes == ("gpu01", "gpu02") and not parts[1].default
    assert cs.parse_gpus("gpu:h100:4(S:0-1),gpu:2") == 6 and cs.parse_gpus("(null)") == 0


def test_a_healthy_cluster_passes_every_check_in_order():
    results = cs.evaluate(cs.SlurmContext(facts(), SlurmAsk(nodes=3)))
    assert all(r.ok for r in results), [r for r in results if not r.ok]
    assert [r.check for r in results if r.node == cs.SLURM_ROW] == ["controller", "partition", "time"]
    assert [r.check for r in results][0] == "controller"


def test_no_controller_skips_the_rest():
    results = cs.evaluate(cs.SlurmContext(cs.SlurmFacts(cs.Answer(1, "", "Unable to contact slurm controller")),
                                          SlurmAsk()))
    assert not results[0].ok and "Unable to contact" in results[0].finding
    assert all(r.skipped for r in results[1:]) and len(results) == len(cs.CHECK_IDS)


def test_gpus_nodes_munge_and_time_against_the_ask():
    ask = SlurmAsk(nodes=2, partition="gpu", gpus_per_node=8, time="2:00:00")
    results = cs.evaluate(cs.SlurmContext(facts(munge={"gpu01": True}), ask, expected_s=7200))
    assert by(results, "nodes", "gpu02").status == "warn"  # down*: not responding
    assert not by(results, "nodes").ok  # one usable node, two asked for
    assert by(results, "gres", "gpu01").ok
    assert not by(results, "time").ok and "MaxTime" in by(results, "time").finding
    many = cs.evaluate(cs.SlurmContext(facts(), SlurmAsk(nodes=3, gpus_per_node=1)))
    assert not by(many, "gres", "node0").ok and "--gpus-per-node 0" in by(many, "gres", "node0").fix
    broken = cs.evaluate(cs.SlurmContext(facts(munge={"node0": True, "node1": False, "node2": True}), SlurmAsk()))
    assert not by(broken, "munge", "node1").ok and by(broken, "munge", "node0").ok


def test_a_run_longer_than_the_limit_is_warned_with_the_resume_path():
    results = cs.evaluate(cs.SlurmContext(facts(), SlurmAsk(time="30"), expected_s=3600))
    r = by(results, "time")
    assert r.status == "warn" and "dscluster restart" in r.fix
    default_limit = cs.evaluate(cs.SlurmContext(facts(), SlurmAsk(partition="gpu"), expected_s=3600))
    assert by(default_limit, "time").status == "warn"  # the partition's DefaultTime (30:00) ends it

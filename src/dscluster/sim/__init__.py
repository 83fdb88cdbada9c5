"""The simulated multi-node cluster (network namespaces + the real node agent). Needs root.

    from dscluster.sim import SimCluster
    sim = SimCluster.up("mytest", 3)        # returns when ssh to every node works
    sim.exec("node0", ["hostname"])         # inside node0's namespaces, as root
    sim.partition("node1"); sim.heal("node1"); sim.crash("node2"); sim.heal("node2")
    sim.down()
"""

from dscluster.sim.cluster import SimCluster
from dscluster.sim.teardown import down, leftovers, list_sims

__all__ = ["SimCluster", "down", "leftovers", "list_sims"]

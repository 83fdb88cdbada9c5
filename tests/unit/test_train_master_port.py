"""The trainer hands the run's own port to DeepSpeed's MPI discovery (concurrent OpenMPI runs)."""

import inspect

from dscluster.train.trainer import distributed_port_kwargs


def test_the_runs_port_reaches_deepspeeds_mpi_discovery():
    import deepspeed
    from deepspeed import comm

    assert distributed_port_kwargs({"DSCLUSTER_MASTER_PORT": "23456"}) == {"distributed_port": 23456}
    assert distributed_port_kwargs({}) == {}  # plain `deepspeed` launches keep DeepSpeed's default
    assert distributed_port_kwargs({"DSCLUSTER_MASTER_PORT": "nope"}) == {}
    assert distributed_port_kwargs({"DSCLUSTER_MASTER_PORT": "70000"}) == {}
    # the keyword exists in this DeepSpeed, and MPI discovery is what uses it
    assert "distributed_port" in inspect.signature(deepspeed.init_distributed).parameters
    assert "distributed_port" in inspect.signature(comm.comm.mpi_discovery).parameters

"""The slurm backend's own options, as the views offer them (launcher/backends/base.Option): what `launch`
asks Slurm for outside an allocation (salloc, sbatch) and `--sbatch`, what `doctor --slurm` checks for; and
DeepSpeed's --include/--exclude as Slurm's own node selection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.backends.base import Option

_ASKED = ("partition", "nodes", "ntasks_per_node", "gpus_per_node", "time")


def LAUNCH() -> tuple[Option, ...]:  # noqa: N802 - a table, built when asked (its help in the user's language)
    return (
        Option("--partition", tr("Slurm partition (default: the cluster's default partition)")),
        Option("--nodes", tr("nodes to ask for (default: the spec's)"), "nodes", metavar="N"),
        Option("--ntasks-per-node", tr("ranks per node (default: the spec's slots, else 1)"), "procs", metavar="N"),
        Option("--gpus-per-node", tr("GPUs per node to ask for (default 0)"), "count", metavar="N"),
        Option("--time", tr("the job's time limit, Slurm format (MM, MM:SS, HH:MM:SS)"), metavar="T"),
        Option("--sbatch", tr("submit a batch job that supervises the run from inside it (outlives this session)"),
               "switch"),
    )


def DOCTOR() -> tuple[Option, ...]:  # noqa: N802
    return (
        Option("--slurm", tr("check the Slurm cluster instead: controller, partition, nodes, GPUs (gres), munge on "
                             "every node, time limit"), "switch"),
        Option("--partition", tr("the partition the run will use (default: the default one)")),
        Option("--nodes", tr("nodes the run asks for"), "count", 1, "N", 1),
        Option("--gpus-per-node", tr("GPUs per node the run asks for"), "count", 0, "N", 0),
        Option("--time", tr("the time limit the run asks for (Slurm format)"), metavar="T"),
        Option("--expect", tr("how long the run is expected to take (Slurm format)"), metavar="T"),
    )


def request_from(given: Mapping[str, Any]):
    """The SlurmAsk the options give, or None when none was given (the spec's nodes and slots then)."""
    if all(given.get(k) is None for k in _ASKED) and not given.get("sbatch"):
        return None
    from dscluster.launcher.backends.slurm.clients import SlurmAsk  # noqa: PLC0415

    return SlurmAsk(nodes=given.get("nodes") or 0, tasks_per_node=given.get("ntasks_per_node") or 0,
                    partition=given.get("partition"), gpus_per_node=given.get("gpus_per_node") or 0,
                    time=given.get("time"))


def node_selection(flags) -> dict[str, str | None]:
    """DeepSpeed's --include / --exclude under `--launcher slurm`, as Slurm's own node selection
    ({"nodelist", "exclude"}: salloc's and sbatch's options, srun's inside an allocation). Slurm selects
    nodes, never a device of one: NODE:SLOT is refused, as are --num_nodes/--num_gpus that contradict
    --nodes/--ntasks-per-node (they become those otherwise)."""
    from dscluster.launcher.runnerflags import parse_node_specs  # noqa: PLC0415

    out: dict[str, str | None] = {"nodelist": None, "exclude": None}
    for flag, key, value in (("--include", "nodelist", flags.include), ("--exclude", "exclude", flags.exclude)):
        if value is None:
            continue
        specs = parse_node_specs(value, flag)
        slotted = [n for n, slots in specs.items() if slots is not None]
        if slotted:
            raise UsageError(tr("{flag} {value!r} under --launcher slurm: Slurm selects whole nodes, not the slots of "
                                "one ({names})", flag=flag, value=value, names=", ".join(slotted)),
                             tr("name whole nodes ({flag} {nodes}); Slurm binds each rank's devices itself "
                                "(--gpus-per-node)", flag=flag, nodes="@".join(specs)), setting=flag)
        out[key] = ",".join(specs)
    if flags.include is not None and flags.exclude is not None:
        raise UsageError(tr("--include and --exclude cannot be used together"),
                         tr("keep one of them (DeepSpeed refuses both too)"), setting="--include")
    return out

"""How the supervisor and `stop` reach the nodes of a run: a Runner per host, from the recorded cluster spec.

A run with no hosts (a local run) has one "node", this machine, reached without ssh.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dscluster.cluster.runner import Runner, run_parallel
from dscluster.cluster.ssh import NO_MUX
from dscluster.safepython import module_argv

if TYPE_CHECKING:
    from dscluster.runs.records.record import RunRecord


def recorded_spec(record: RunRecord):
    """The cluster spec the run was launched on, as recorded then (runs.records.record explains why). A record
    written before it was recorded names the spec by path: that path is read again."""
    import dataclasses

    from dscluster.trust import own_state_dir

    spec = record.launch.cluster_spec
    if spec is not None:
        from dscluster.cluster.spec import format_spec, parse_spec

        # Through the spec parser, as a spec file is read: run.json sits in a directory the node user can
        # write, so what reaches ssh_config (addresses, user, ports) gets the same checks a spec gets.
        spec = parse_spec(format_spec(spec), spec.path)
    else:
        from dscluster.cluster.spec import resolve_spec

        spec = resolve_spec(record.launch.cluster_arg)
    # The state directory holds what runs (the ssh wrapper on PATH) and the key: the launching user's own,
    # never a directory the record names (dscluster.trust.own_state_dir).
    return dataclasses.replace(spec, state_dir=own_state_dir(spec.name, spec.state_dir))


def node_runners(record: RunRecord, *, own_connection: bool = True) -> dict[str, Runner]:
    """host (as in the hostfile) -> the Runner that reaches it ({} for a local run: this machine). A run's
    own connections never ride the shared ControlMaster (see cluster.ssh.NO_MUX)."""
    hosts = record.launch.host_names
    if not hosts:
        return {}
    from dscluster.cluster.ssh import SSHRunner, ensure_ssh_files

    spec = recorded_spec(record)
    ensure_ssh_files(spec)
    return {h: SSHRunner(spec, spec.node(h), node=h, multiplex=not own_connection) for h in hosts}


def node_links(record: RunRecord, *, own_connection: bool = True) -> dict[str, list[str]]:
    """host (as in the hostfile) -> ssh argv prefix (ending in `--`) to run a command there."""
    return {h: r.prefix() for h, r in node_runners(record, own_connection=own_connection).items()}


def node_names(record: RunRecord) -> dict[str, str]:
    """host (as in the hostfile) -> the node's name in the cluster spec (the host itself if unknown)."""
    hosts = record.launch.host_names
    if not hosts:
        return {}
    try:
        spec = recorded_spec(record)
    except Exception:  # noqa: BLE001 - a name is only for messages
        return {h: h for h in hosts}
    out = {}
    for h in hosts:
        try:
            out[h] = spec.node(h).name
        except Exception:  # noqa: BLE001
            out[h] = h
    return out


def sim_name(record: RunRecord) -> str | None:
    """The simulated cluster a run's spec belongs to (<home>/sims/<name>/dscluster.toml), else None."""
    arg = record.launch.cluster_arg
    if not arg:
        return None
    path = Path(arg)
    if path.parent.parent.name == "sims":
        return path.parent.name
    try:  # a hostfile of a simulated cluster's hosts: the spec it resolved to keeps the sim's state dir
        state = recorded_spec(record).state_dir
    except Exception:  # noqa: BLE001 - only for messages
        return None
    return state.parent.name if state is not None and state.parent.parent.name == "sims" else None


def unreachable_hosts(runners: Mapping[str, Runner], timeout: float = 8.0) -> list[str]:
    """The hosts whose runner cannot run a trivial command now, in the runners' order."""
    def one(host: str) -> tuple[str, bool]:
        return host, runners[host].run(["true"], timeout=timeout).ok

    return [h for h, ok in run_parallel(one, list(runners)) if not ok]


def silent_hosts(runners: Mapping[str, Runner], timeout: float = 1.0) -> list[str]:
    """The hosts whose sshd gives no banner to a fresh connection now (runs/supervising/probe.py): a cut link, a frozen
    or powered-off node. No ssh session, no process: cheap enough to ask 32 nodes every quarter second."""
    from dscluster.runs.supervising.probe import all_answer

    hosts = [h for h, r in runners.items() if getattr(r, "node_spec", None) is not None]
    return [hosts[i] for i in all_answer([(runners[h].node_spec.address, runners[h].node_spec.ssh_port)
                                          for h in hosts], timeout)]


def transport_env(spec, backend, *, write: bool = True) -> dict[str, str]:
    """What makes pdsh (or an MPI launcher's rsh agent) use the cluster's ssh_config and pinned host keys,
    on connections of the run's own (see NO_MUX). `write=False` (a dry run) only computes it: the
    identity must exist, but no ssh file is written."""
    from dscluster.cluster.ssh import ensure_ssh_files, require_identity
    if write:
        ensure_ssh_files(spec)
    else:
        require_identity(spec)
    return backend.transport_env(spec, tuple(NO_MUX))


def end_masters(record: RunRecord) -> None:
    """The run's own ssh masters (masters.py) end: its supervisor is gone (killed), so nothing else ends them."""
    if not record.launch.hosts:
        return
    from dscluster.runs.supervising.masters import RunMasters

    try:
        RunMasters(recorded_spec(record), node_runners(record), record.id).close()
    except Exception:  # noqa: BLE001 - they end by themselves PERSIST_S seconds after their last session
        pass


def remote_reap(record: RunRecord, hosts: list[str], timeout: float = 10.0, grace: float = 1.0,
                runners: Mapping[str, Runner] | None = None) -> dict[str, str]:
    """Run the reaper for this run on `hosts` in parallel; returns host -> short outcome."""
    if not record.launch.hosts:
        from dscluster.runs.supervising.reaper import reap

        return {"localhost": f"reaped {reap(record.id, grace)}"}
    runners = node_runners(record) if runners is None else runners
    argv = [*module_argv(record.launch.python, "dscluster.runs.supervising.reaper"), record.id, f"--grace={grace}"]

    def one(host: str) -> tuple[str, str]:
        res = runners[host].run(argv, timeout=timeout)
        return host, (res.stdout.strip() or res.stderr.strip()[-200:] or ("timed out" if res.timed_out else
                                                                            str(res.returncode)))

    return dict(run_parallel(one, hosts))

"""The notebook API: drive and watch multi-node DeepSpeed runs from Python.

    import dscluster
    cluster = dscluster.Cluster()            # the default cluster spec, or this machine alone
    cluster                                  # nodes x GPUs table (rich HTML in Jupyter)
    cluster.doctor()                         # every check on every node
    run = dscluster.launch("train.py", ["--deepspeed", "--deepspeed_config", "ds.json"], max_restarts=2)
    run.watch()                              # live widget: progress, loss curve, status, last log lines
    run.metrics()                            # pandas DataFrame of metrics.jsonl
    run.logs(rank=0); run.stop()

The run is started by the same detached supervisor as `dscluster launch` (never inside the kernel),
so restarting or closing the notebook does not touch the training job.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dscluster.errors import ConfigError, DsclusterError, RunError, from_os_error
from dscluster.i18n import tr
from dscluster.jupyter import clusterview, launching, rundata
from dscluster.runs import service
from dscluster.runs.preparing.start import LOST

FINISHED = ("succeeded", "failed", "stopped")
__all__ = ["Cluster", "Run", "launch", "list_runs"]


def _show_plainly(shell, etype, evalue, tb, tb_offset=None) -> list[str]:
    """IPython's display of a DsclusterError: its message and fix, as the CLI prints them (no traceback)."""
    lines = [f"{etype.__name__}: {evalue.message}"] + ([f"  {tr('fix')}: {evalue.hint}"] if evalue.hint else [])
    shell._showtraceback(etype, evalue, lines)  # the cell's error output (a kernel sends it to the notebook)
    return lines


def _plain_errors(func):
    """The API's one error boundary: an OSError (a folder this person may not write, a missing path, a full
    disk) is raised as the typed error that names it and the fix (errors.from_os_error); in a notebook a
    DsclusterError shows as its message and fix, not as a traceback."""

    @functools.wraps(func)
    def inner(*args, **kwargs):
        ipython = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
        if ipython is not None and not ipython.custom_exceptions:  # a handler of the person's own stays
            ipython.set_custom_exc((DsclusterError,), _show_plainly)
        try:
            return func(*args, **kwargs)
        except OSError as err:
            raise from_os_error(err) from None

    return inner


class Cluster:
    """A cluster spec (path, hostfile, name resolved like `--cluster`, or a ClusterSpec), or None for
    the default (DSCLUSTER_CLUSTER, ./dscluster.toml, the running simulated cluster, else this machine)."""

    @_plain_errors
    def __init__(self, spec: Any = None):
        if spec is not None and not isinstance(spec, (str, Path)) and not hasattr(spec, "nodes"):
            raise ConfigError(tr("cluster must be a spec path, a hostfile, a cluster name or a ClusterSpec, got {t}",
                                 t=type(spec).__name__),
                              tr("e.g. Cluster('dscluster.toml'), or Cluster() for the default"), setting="cluster")
        if spec is not None and not isinstance(spec, (str, Path)):
            self._view = clusterview.ClusterView(
                name=spec.name, shared_dir=Path(spec.shared_dir), source="spec", spec=spec,
                nodes=[{"name": n.name, "address": n.address, "slots": n.slots} for n in spec.nodes],
                spec_path=str(spec.path) if getattr(spec, "path", None) else None)
        else:
            self._view = clusterview.resolve(str(spec) if spec is not None else None)
            if spec is not None and self._view.error:
                err = self._view.error
                raise ConfigError(err["message"], err.get("hint"), setting=err.get("setting"))
        self._sampler = clusterview.NodeSampler()

    @property
    def name(self) -> str:
        return self._view.name

    @property
    def spec(self):
        return self._view.spec

    @property
    def shared_dir(self) -> Path:
        return self._view.shared_dir

    @property
    def nodes(self) -> list[dict]:
        """Each node with its latest sample (GPUs via NVML, else CPU/memory)."""
        return clusterview.describe(self._view, self._sampler)["nodes"]

    @_plain_errors
    def doctor(self, fast: bool = False, collective: bool = False):
        """Run every doctor check on every node in parallel; returns the report (rich HTML in Jupyter)."""
        if self._view.spec is None:
            raise ConfigError(tr("no cluster spec: doctor checks a multi-node cluster"),
                              tr("create one with `dscluster init`, or rehearse with `dscluster sim up 2`"),
                              setting="cluster")
        from dscluster.doctor import run_doctor
        from dscluster.jupyter.notebook_view import DoctorReport

        return DoctorReport(run_doctor(self._view.spec, fast=fast, collective=collective))

    @_plain_errors
    def runs(self) -> list[Run]:
        return [Run(r["id"], self._view.runs_dirs()) for r in rundata.list_runs(self._view.runs_dirs())]

    def _repr_html_(self) -> str:
        from dscluster.jupyter.notebook_view import cluster_html

        return cluster_html(clusterview.describe(self._view, self._sampler))

    def __repr__(self) -> str:
        return f"Cluster({self.name!r}, nodes={[n['name'] for n in self._view.nodes]})"


class Run:
    """A run directory on shared storage, read live (status, metrics, logs), stoppable."""

    @_plain_errors
    def __init__(self, run_id: str, runs_dirs: Sequence[Path] | None = None):
        dirs = list(runs_dirs) if runs_dirs else clusterview.resolve(None).runs_dirs()
        self._ref = rundata.find_run(dirs, run_id)  # the store's lookup: an id, a unique prefix, a run name

    @property
    def id(self) -> str:
        return self._ref.id

    @property
    def path(self) -> Path:
        return self._ref.path

    @property
    def record(self) -> dict:
        return rundata.run_record(self._ref)

    @property
    def status(self) -> str:
        """The record's status, or "lost" when its supervisor is gone (the record will never change again)."""
        from dscluster.runs.views.summary import summary

        return summary(rundata.record_of(self._ref), live=False).status

    @property
    def owner(self) -> str | None:
        """Who launched the run: only they (or root) may stop or restart it."""
        from dscluster.runs.records.owner import owner_of

        return owner_of(rundata.record_of(self._ref), self._ref.path)

    @property
    def done(self) -> bool:
        return self.status in (*FINISHED, LOST)

    def summary(self) -> dict:
        return rundata.summary(self._ref)

    @property
    def explanation(self) -> dict | None:
        """Why the run failed, in this process's language: cause, fix, restart_can_help, and `error`, the
        first failing rank's own error (type, message, where, rank, node). None while nothing failed."""
        return self.summary().get("explanation")

    @property
    def error(self) -> str | None:
        """The first failing rank's own error on one line: `rank 0 on node1: TypeError: ... (train.py:22)`."""
        from dscluster.explain import error_line

        return error_line((self.explanation or {}).get("error"))

    def events(self) -> list[dict]:
        return rundata.events(self._ref)["records"]

    def checkpoints(self) -> list[dict]:
        return rundata.checkpoints(self._ref)

    def metric_records(self) -> list[dict]:
        return rundata.metrics(self._ref)["records"]

    def metrics(self):
        """metrics.jsonl as a pandas DataFrame, one row per logged step (eval and done lines included)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.metric_records())

    def log_names(self) -> list[str]:
        return [f["name"] for f in rundata.log_files(self._ref)]

    def logs(self, rank: int | None = 0, name: str | None = None, tail: int | None = 200) -> str:
        """The last `tail` lines (None: all) of a rank's log (rank=None with name=...: any log, e.g.
        'launcher.log'). Before the ranks have written anything, rank 0 falls back to launcher.log."""
        if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 0):
            raise ConfigError(tr("tail must be a whole number >= 0 or None, got {v!r}", v=tail),
                              tr("e.g. tail=50, or tail=None for the whole log"), setting="tail")
        names = self.log_names()
        if name is None:
            wanted = [n for n in names if rank is not None and _rank_of(n) == rank]
            ranks = sorted({r for r in map(_rank_of, names) if r is not None}) if not wanted else []
            if rank not in (0, None) and ranks:
                raise RunError(tr("run {id} has no rank {rank}", id=self.id, rank=rank),
                               tr("ranks with logs: {ranks}", ranks=", ".join(map(str, ranks))), setting="rank")
            name = wanted[-1] if wanted else ("launcher.log" if "launcher.log" in names else None)
            if name is None:
                return ""
        text = rundata.log_tail(self._ref, name, None, max_bytes=4 * 1024 * 1024)["text"]
        lines = text.splitlines()
        return "\n".join(lines if tail is None else lines[len(lines) - tail:])

    def wait(self, timeout: float | None = None, poll: float = 1.0) -> str:
        """Block until the run finishes (or `timeout` seconds pass); returns the status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.done and (deadline is None or time.monotonic() < deadline):
            time.sleep(poll)
        return self.status

    @_plain_errors
    def stop(self, wait: bool = True, timeout: float = 60.0) -> str:
        """Stop on every node (graceful, then forced by the supervisor's teardown); returns the status."""
        service.stop(self._ref.path)
        return self.wait(timeout) if wait else self.status

    @_plain_errors
    def restart(self, env: dict[str, str] | None = None, hosts: Sequence[str] | str | None = None) -> Run:
        """A new run with the same program, args, cluster, environment and settings, resuming from this
        run's checkpoints. Secret values (tokens, keys) are never recorded: give them again in `env`.
        `hosts` (node names of the cluster spec, e.g. the ones that remain after a node is lost for good)
        runs it there; on another number of ranks the global batch is kept where it divides."""
        picked = ",".join(hosts) if hosts is not None and not isinstance(hosts, str) else hosts
        return Run(service.restart(self._ref.path, launching.checked_env(env), hosts=picked), [self._ref.path.parent])

    def watch(self, interval: float = 1.0, log_lines: int = 12):
        """A live ipywidgets view (progress, loss curve, status, last log lines), updated in the
        background until the run finishes; returns the widget (display it, or let the cell show it)."""
        from dscluster.jupyter.notebook_view import RunWatcher

        return RunWatcher(self, interval=interval, log_lines=log_lines).start()

    def _repr_html_(self) -> str:
        from dscluster.jupyter.notebook_view import run_html

        return run_html(self)

    def __repr__(self) -> str:
        return f"Run({self.id!r}, status={self.status!r})"


def _rank_of(name: str) -> int | None:
    import re

    m = re.search(r"rank(\d+)", name)
    return int(m.group(1)) if m else None


@_plain_errors
def launch(script: str, args: Sequence[str] | str = (), cluster: Any = None, max_restarts: int | None = None, *,
           config: dict | str | None = None, name: str | None = None, nprocs: int | None = None,
           cwd: str | Path | None = None, env: dict[str, str] | None = None, allow_shrink: bool = False,
           wait: bool = False, launcher: str | None = None, options: dict[str, Any] | None = None) -> Run:
    """Start `script` (a .py path, or "-m module") under the supervisor on the cluster; returns the Run.

    max_restarts: restarts after a failure a restart can help (default: as `dscluster launch`, 2; 0 never restarts).
    config: a DeepSpeed config (dict, JSON text or path) added as --deepspeed_config unless the args
    already name one. cluster: a spec path, hostfile, name, or Cluster (default: like the CLI).
    nprocs: processes on this machine when no cluster is given (default 1). env: variables for every
    rank (values of secret-looking names, *TOKEN*, *KEY*..., are masked in the record and logs).
    allow_shrink: when a lost node does not come back before a restart, continue on the nodes that remain.
    wait: when another run holds these GPUs, queue this run (status "queued") until they are free instead of
    raising GpusBusy.
    launcher: the launcher backend (default: the cluster's own), as `dscluster launch --launcher`. options: its
    own launch options by name, as the CLI's flags without dashes (`dscluster launch --help` lists them), e.g.
    a scheduler's `nodes` or `partition`.
    Everything is validated before anything starts; a bad setting raises ConfigError/UsageError naming it.
    """
    if isinstance(cluster, Cluster):
        cluster = cluster._view.spec_path or (cluster.spec.path if cluster.spec is not None else None)
    body = {"script": script, "args": list(args) if not isinstance(args, str) else args,
            "cluster": str(cluster) if cluster else None, "max_restarts": max_restarts, "config": config,
            "name": name, "nprocs": nprocs, "env": env, "wait": bool(wait), "launcher": launcher, "options": options}
    request = launching.parse_launch(body, cwd=str(cwd or Path.cwd())).but(allow_shrink=bool(allow_shrink))
    run_id = service.launch(request)
    prepared_dirs = clusterview.resolve(request.place.cluster).runs_dirs()
    try:
        return Run(run_id, prepared_dirs)
    except rundata.RunNotFound:
        raise RunError(tr("run {run_id} was started but its directory is not visible here", run_id=run_id),
                       tr("check that the shared directory is mounted on this machine")) from None


@_plain_errors
def list_runs(cluster: Any = None) -> list[Run]:
    """Every run of the cluster (default: like the CLI), newest first."""
    return (cluster if isinstance(cluster, Cluster) else Cluster(cluster)).runs()



"""The run record, typed: `RunRecord` (run.json) with its `LaunchSpec` (what the supervisor executes), which
holds the cluster spec as resolved at launch (`cluster_spec`, a `ClusterSpec`), and its `Attempt`s.

Everything below the views passes these, never the JSON dicts: runs.records.store reads and writes them, the
supervisor records how a run goes with `RunRecord.replace` (through store.update_record), and the views
format a runs.views.summary.RunSummary of one.

run.json stays plain JSON that any tool reads; these frozen dataclasses are its one schema. `to_json()`
writes it, `from_json()` reads it back, both ways losslessly: keys this version does not know are kept in
`extra` and written again, so a record from a newer dscluster (or one a tool annotated) survives a read
and a write. `version` is the schema's: records written before it existed (no `version` key) are
version 0 and read the same way, since version 1 only added keys (`version`, `launch.cluster_spec`).

Optional keys (OPTIONAL of each class: `ended`, `supervisor_pid`, `waiting_for`, `scheduler`, ...) are written
when they hold a value, or when the record they came from had them (`present`), also as null: so what a
read and a write give back is what was read, and a key nobody set is not invented.

Why the cluster is recorded resolved: the supervisor runs in its own session with cwd "/", `stop`,
`logs` and `restart` run from wherever the user is, and the user may edit the hostfile or spec while the
run goes on. Resolving the spec again from a path string would find another spec (a relative path,
./dscluster.toml, $DSCLUSTER_CLUSTER) or other nodes; the recorded one is the run's.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dscluster.cluster.spec import ClusterSpec
from dscluster.launcher import backends
from dscluster.launcher.plan import LaunchRequest, Target
from dscluster.launcher.runnerflags import RunnerFlags
from dscluster.runs.records.request import Supervision

RECORD_VERSION = 1
REFERENCE_TRAINER = "dscluster.train"  # the reference trainer's module: `-m dscluster.train`


def is_reference_trainer(program: str, is_module: bool) -> bool:
    """Whether the program is dscluster's reference trainer (which logs, checks and resumes itself)."""
    return bool(is_module) and program == REFERENCE_TRAINER


def pinned(spec: ClusterSpec) -> ClusterSpec:
    """The spec with its state directory (identity, ssh_config, known_hosts) made explicit, as recorded."""
    from dscluster.cluster.identity import cluster_state_dir

    return dataclasses.replace(spec, state_dir=cluster_state_dir(spec, create=False).absolute())


def _plain(value: Any) -> Any:
    """A field's value as JSON has it: lists for tuples (nested ones too), dicts for mappings."""
    if isinstance(value, ClusterSpec):
        return value.to_dict()
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


_NOT_KEYS = ("extra", "present")  # fields that are no run.json keys of their own


def _known(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _NOT_KEYS)


def _is_default(f: dataclasses.Field, value: Any) -> bool:
    if f.default is not dataclasses.MISSING:
        return value == f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return value == f.default_factory()  # type: ignore[misc]
    return False


def _to_json(record: Any, optional: tuple[str, ...], key: str = "") -> dict[str, Any]:
    """Every field but `extra` (whose keys are written back as they were read). An `optional` field is
    written when it is set, or when the file it was read from had it (`present`): a key that was never
    written stays absent, and one written as null (the supervisor's `waiting_for`) is written again.
    `scheduler` is written under `key`, the backend's name (scheduler_key)."""
    out = {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)
           if f.name not in _NOT_KEYS and not (f.name in optional and f.name not in record.present
                                                and _is_default(f, getattr(record, f.name)))}
    if "scheduler" in out:
        out[key] = out.pop("scheduler")
    return {**dict(record.extra), **out}


def _present(data: Mapping[str, Any], optional: tuple[str, ...], key: str = "") -> frozenset[str]:
    return frozenset(k for k in optional if k in data) | ({"scheduler"} if key and key in data else set())


def scheduler_key(launcher: str | None) -> str:
    """The run.json key of a record's `scheduler` field: the backend's own name (`launch.<name>` for the
    request, `<name>` for what the scheduler says), so a record says whose it is; records written before
    the field was generic used that key already and read the same."""
    return launcher or backends.DEFAULT


def _scheduler(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return {"scheduler": value} if isinstance(value, Mapping) or (value is None and key in data) else {}


# The runner flags run.json keeps flat, as records always had them (run.json key -> RunnerFlags field); the
# others, when given, under `runner` (`refused` never: a refused flag stops the launch).
_RUNNER_FLAT = {"master_port": "master_port", "no_python": "no_python", "no_local_rank": "no_local_rank",
                "runner_flags": "passed"}
_RUNNER_NESTED = tuple(f.name for f in dataclasses.fields(RunnerFlags)
                       if f.name not in (*_RUNNER_FLAT.values(), "refused"))


def _runner_json(runner: RunnerFlags, present: frozenset[str]) -> dict[str, Any]:
    out = {key: _plain(getattr(runner, name)) for key, name in _RUNNER_FLAT.items()}
    if not runner.passed and "runner_flags" not in present:
        del out["runner_flags"]  # absent, as records without pass-through flags were written
    given = {f.name: _plain(getattr(runner, f.name)) for f in dataclasses.fields(RunnerFlags)
             if f.name in _RUNNER_NESTED and not _is_default(f, getattr(runner, f.name))}
    return {**out, "runner": given} if given or "runner" in present else out


def _runner_of(data: Mapping[str, Any]) -> RunnerFlags:
    nested = data.get("runner") if isinstance(data.get("runner"), Mapping) else {}
    values = {name: data[key] for key, name in _RUNNER_FLAT.items() if key in data}
    values.update({k: nested[k] for k in _RUNNER_NESTED if k in nested})
    values["passed"] = tuple(values.get("passed") or ())
    return RunnerFlags(**values)


# A record's supervision keys; absent ones read as records without them always meant (no restarts, no
# stall timeout: a half-written record), the others as the request's defaults.
_POLICY = tuple(f.name for f in dataclasses.fields(Supervision))
UNRECORDED = Supervision(max_restarts=0, stall_timeout=0.0)


@dataclass(frozen=True)
class LaunchSpec:
    """What the supervisor executes for every attempt (run.json's `launch`): `request(attempt, port)` is
    the one place a `LaunchRequest` for the pure plan builder is made from a record."""

    program: str
    is_module: bool = False
    args: tuple[str, ...] = ()  # the user's own (what a restart repeats)
    hosts: tuple[tuple[str, int], ...] = ()  # hostfile order; empty: this machine
    launcher: str = "local"
    python: str = "python3"
    cwd: str = "."
    env: Mapping[str, str] = field(default_factory=dict)  # plain values only; secrets travel apart
    cluster_arg: str | None = None  # how the cluster was named (for messages); never resolved again
    cluster_spec: ClusterSpec | None = None  # the cluster as resolved at launch (None: local, a scheduler's, old)
    local_procs: int = 1
    # The request's supervision policy as given (runs/records/request.py), its keys flat in run.json's `launch`.
    supervision: Supervision = UNRECORDED
    ssh_port: int | None = None
    network_interface: str | None = None
    ds_config_text: str | None = None
    rank_args: tuple[str, ...] | None = None  # args with --deepspeed_config at the run's own copy
    include: str | None = None  # the runner's --include the placement made (runs/preparing/target.py)
    launcher_args: tuple[str, ...] = ()  # the launcher's arguments: the user's words, then the backend's own
    # The request's DeepSpeed runner flags as given (launcher/runnerflags.py): the plan reads them (--no_python,
    # a fixed --master_port, the flags passed on) and a restart asks for the same run with them (its selection
    # of hosts and slots included). run.json keeps four of them flat as records always had them, the rest
    # under `runner` when any was given.
    runner: RunnerFlags = RunnerFlags()
    runner_python: str | None = None  # this machine's interpreter when the nodes' differs (containers)
    transport_env: Mapping[str, str] | None = None
    node_uid: int | None = None
    # The scheduler's request as its backend recorded it (Backend.request_record; opaque here), written
    # under the backend's own key (run.json's `launch.<launcher>`, see `scheduler_key`).
    scheduler: Mapping[str, Any] | None = None
    exclude_unhealthy: bool = False  # with allow_shrink: a restart leaves out the node the failure points to
    share_gpus: bool = False  # takes no GPU leases and is never refused for them (runs/leases/leasing.py)
    extra: Mapping[str, Any] = field(default_factory=dict)
    present: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # optional keys read

    @property
    def ranks_args(self) -> tuple[str, ...]:
        return tuple(self.rank_args or self.args)

    @property
    def backend(self) -> backends.Backend:
        """The launcher backend of the run (the registry's one object; `launcher` is its recorded name)."""
        return backends.get(self.launcher)

    @property
    def reference_trainer(self) -> bool:
        """The run's program is the reference trainer (`-m dscluster.train`)."""
        return is_reference_trainer(self.program, self.is_module)

    def request(self, attempt: int, port: int, *, run_id: str, run_dir: Path, secrets: Mapping[str, str] = (),
                user_env: Mapping[str, str] | None = None, hosts: tuple[tuple[str, int], ...] | None = None,
                base_env: Mapping[str, str] | None = None, files_dir: Path | None = None) -> LaunchRequest:
        """The plan builder's request for one attempt: `port` its rendezvous port, `user_env` extra
        variables for this attempt (a checkpoint to resume), `hosts` the nodes when they are known only
        now (a scheduler's allocation)."""
        return LaunchRequest(
            run_id=run_id, run_dir=Path(run_dir), target=Target(self.program, self.is_module, self.ranks_args),
            hosts=self.hosts if hosts is None else hosts, master_port=port, launcher=self.launcher,
            python=self.python, cwd=self.cwd, base_env=dict(os.environ if base_env is None else base_env),
            user_env={**(user_env or {}), **self.env, **dict(secrets)}, transport_env=dict(self.transport_env or {}),
            ssh_port=self.ssh_port, is_root=os.geteuid() == 0, attempt=attempt, local_procs=self.local_procs,
            network_interface=self.network_interface, include=self.include, launcher_args=self.launcher_args,
            runner=self.runner, ds_config_text=self.ds_config_text, runner_python=self.runner_python,
            files_dir=files_dir)

    OPTIONAL = ("cluster_spec", "transport_env", "node_uid", "scheduler", "runner_python", "allow_shrink",
                "runner_flags", "exclude_unhealthy", "share_gpus", "runner")

    def to_json(self) -> dict[str, Any]:
        # Absent rather than null, as records without them were always written.
        out = _to_json(self, self.OPTIONAL, scheduler_key(self.launcher))
        out.pop("runner", None)
        out.update(_runner_json(self.runner, self.present))
        policy = dataclasses.asdict(out.pop("supervision"))
        if not policy["allow_shrink"] and "allow_shrink" not in self.present:
            del policy["allow_shrink"]
        return {**out, **policy}

    @property
    def host_names(self) -> tuple[str, ...]:
        """The hosts, in hostfile order, without their slots (empty: this machine)."""
        return tuple(h for h, _ in self.hosts)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LaunchSpec:
        known = tuple(k for k in _known(cls) if k not in ("supervision", "runner")) + _POLICY
        values = {"program": "", **{k: data[k] for k in known if k in data}}  # "": a half-written record
        values["runner"] = _runner_of(data)
        known += (*_RUNNER_FLAT, "runner")
        for k in ("args", "launcher_args"):
            values[k] = tuple(values.get(k) or ())
        if values.get("rank_args") is not None:
            values["rank_args"] = tuple(values["rank_args"])
        values["hosts"] = tuple((str(h), int(s)) for h, s in data.get("hosts") or ())
        if isinstance(data.get("cluster_spec"), Mapping):
            values["cluster_spec"] = ClusterSpec.from_dict(dict(data["cluster_spec"]))
        values["env"] = dict(values.get("env") or {})
        values["supervision"] = dataclasses.replace(UNRECORDED, **{k: values.pop(k) for k in _POLICY if k in values})
        key = scheduler_key(values.get("launcher", "local"))
        return cls(**values, **_scheduler(data, key), extra={k: v for k, v in data.items() if k not in (*known, key)},
                   present=_present(data, cls.OPTIONAL, key))


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run (run.json's `attempts[]`), as the supervisor records it."""

    n: int
    started: str | None = None
    ended: str | None = None
    exit_code: int | None = None  # DeepSpeed's runner's
    reason: str | None = None  # "succeeded", "stopped", "time limit", or what failed
    master_port: int | None = None
    rank_nodes: tuple[str, ...] = ()  # the node of each rank, in rank order
    resume_step: int | None = None  # the committed step the attempt was given to resume from
    resume_from: str | None = None  # a Hugging Face Trainer's newest complete checkpoint-N at the attempt's start
    rank_exit_code: int | None = None  # the first failing rank's code (set on a failure)
    extra: Mapping[str, Any] = field(default_factory=dict)
    present: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    # Written once the runner started (an attempt that failed before, on an unreachable node, has none).
    OPTIONAL = ("master_port", "rank_nodes", "resume_step", "rank_exit_code", "resume_from")

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, self.OPTIONAL)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Attempt:
        known = _known(cls)
        values = {k: data[k] for k in known if k in data}
        values["n"] = int(data.get("n") or 0)
        values["rank_nodes"] = tuple(str(n) for n in data.get("rank_nodes") or ())
        return cls(**values, extra={k: v for k, v in data.items() if k not in known},
                   present=_present(data, cls.OPTIONAL))


@dataclass(frozen=True)
class RunRecord:
    """run.json: what was launched (written once by `prepare`), and how it went (the supervisor's fields)."""

    id: str
    launch: LaunchSpec
    name: str | None = None
    argv: tuple[str, ...] = ()  # as shown: secret-looking values masked
    script: str | None = None
    cluster: str | None = None
    hostfile: str | None = None
    world_size: int | None = None
    ds_config: Mapping[str, Any] | None = None
    first_run_builds: Mapping[str, Any] | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # as shown: secret values masked
    git_commit: str | None = None
    cwd: str | None = None
    status: str = "pending"
    attempts: tuple[Attempt, ...] = ()
    created: str | None = None
    ended: str | None = None
    exit_code: int | None = None
    last_checkpoint_step: int | None = None
    explanation: Mapping[str, Any] | None = None
    version: int = RECORD_VERSION
    # Written by the supervisor as the run goes (absent before):
    supervisor_pid: int | None = None
    supervisor_host: str | None = None
    waiting_for: tuple[str, ...] | None = None  # nodes a restart waits for (names)
    # What the scheduler says about the run's job (its backend's own fields: job id, state, nodes...), written
    # under the backend's own key as `launch.scheduler` is.
    scheduler: Mapping[str, Any] | None = None
    shrinks: tuple[Mapping[str, Any], ...] = ()  # runs.preparing.shrink's entries, one per node set dropped
    batch_plan: Mapping[str, Any] | None = None  # the batch a run on another world size trains with
    # DeepSpeed's .deepspeed_env files merged into the run's environment: {"files": [...], "names": [...]}
    deepspeed_env: Mapping[str, Any] | None = None
    last_hf_checkpoint: str | None = None  # a Hugging Face Trainer's newest complete checkpoint-N (its path)
    # Where the program saves Hugging Face / Accelerate checkpoints, as found from the folders it wrote
    # (dscluster.ckptlayout.discover): an output_dir set in code, Accelerate's project_dir/checkpoints.
    checkpoint_dirs: tuple[str, ...] = ()
    excluded: tuple[Mapping[str, Any], ...] = ()  # runs.preparing.exclude's entries: nodes left out at launch, and why
    metrics_url: str | None = None  # the supervisor's Prometheus endpoint while the run lives
    # The launching OS user's name (runs/records/owner.py): only they (or root) may stop or restart the run. Absent in
    # records from before owners: the owner of run.json (its file's uid) is the run's owner then.
    owner: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know
    present: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # optional keys read

    OPTIONAL = ("ended", "supervisor_pid", "supervisor_host", "waiting_for", "scheduler", "shrinks", "batch_plan",
                "deepspeed_env", "last_hf_checkpoint", "checkpoint_dirs", "excluded", "metrics_url", "owner")

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, self.OPTIONAL, scheduler_key(self.launch.launcher))

    def replace(self, **changes: Any) -> RunRecord:
        """The record with `changes` (dataclasses.replace, lists made tuples and attempts `Attempt`s as the
        fields hold them). An optional field that is changed is written from then on, also as null
        (`waiting_for` cleared)."""
        for key in ("attempts", "shrinks", "argv", "excluded", "checkpoint_dirs"):
            if key in changes:
                changes[key] = tuple(changes[key])
        if "attempts" in changes:
            changes["attempts"] = tuple(a if isinstance(a, Attempt) else Attempt.from_json(a) for a in changes["attempts"])
        if changes.get("waiting_for") is not None:
            changes["waiting_for"] = tuple(changes["waiting_for"])
        present = self.present | {k for k in changes if k in self.OPTIONAL}
        return dataclasses.replace(self, **changes, present=present)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunRecord:
        """A run.json of any version up to this one (version 0: written before records had a version)."""
        known = _known(cls)
        values = {k: data[k] for k in known if k in data}
        values["launch"] = LaunchSpec.from_json(data.get("launch") if isinstance(data.get("launch"), Mapping) else
                                                {"program": ""})
        values["argv"] = tuple(data.get("argv") or ())
        values["attempts"] = tuple(Attempt.from_json(a) for a in data.get("attempts") or () if isinstance(a, Mapping))
        values["version"] = int(data.get("version") or 0)
        if values.get("env") is None:
            values.pop("env", None)
        if values.get("waiting_for") is not None:
            values["waiting_for"] = tuple(values["waiting_for"])
        values["shrinks"] = tuple(s for s in data.get("shrinks") or () if isinstance(s, Mapping))
        values["excluded"] = tuple(s for s in data.get("excluded") or () if isinstance(s, Mapping))
        values["checkpoint_dirs"] = tuple(d for d in data.get("checkpoint_dirs") or () if isinstance(d, str))
        key = scheduler_key(values["launch"].launcher)
        return cls(**values, **_scheduler(data, key), extra={k: v for k, v in data.items() if k not in (*known, key)},
                   present=_present(data, cls.OPTIONAL, key))

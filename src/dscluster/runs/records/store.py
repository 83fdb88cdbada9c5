"""The run store: one directory per run on shared storage, readable by the CLI, the API and the panel.

<shared>/runs/<run-id>/
  run.json        the record (written atomically; runs.records.record.RunRecord is its schema)
  events.jsonl    launched / rank-failed / teardown / restart / finished / stopped, with times
  logs/           launcher.log (the launcher's output) + per-rank logs (DeepSpeed --enable_each_rank_log)
  metrics.jsonl   written by the trainer (rank 0)
  checkpoints/    written by the trainer

Only the supervisor writes run.json after creation; readers never see a half-written file.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import secrets
import stat
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dscluster import fsutil
from dscluster.errors import RunError, UsageError
from dscluster.i18n import tr
from dscluster.paths import runs_dir
from dscluster.runs.records.record import RunRecord

# What the supervisor writes while it runs ("queued": waiting in the GPU queue, runs/leases/leasing.py).
ACTIVE = ("queued", "pending", "running", "restarting")
FINISHED = ("succeeded", "failed", "stopped")

_NAME_OK = re.compile(r"[^A-Za-z0-9_.-]+")


def now_iso() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def iso_time(text: str) -> float:
    """now_iso's text as a time.time() (0.0 for text that is not one)."""
    try:
        return _dt.datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return 0.0


def safe_name(name: str) -> str:
    cleaned = _NAME_OK.sub("-", name).strip("-.") or "run"
    return cleaned[:40]


def new_run_id(name: str, when: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when if when is not None else time.time()))
    return f"{safe_name(name)}-{stamp}-{secrets.token_hex(2)}"


def run_path(shared: Path, run_id: str) -> Path:
    return runs_dir(Path(shared)) / run_id


def create_run(shared: Path, record: RunRecord, files: dict[str, str] | None = None) -> Path:
    """Create the run directory, the `files` the ranks read (name -> text: an inline ds_config) and its first
    run.json (status pending). Returns the directory."""
    path = run_path(shared, record.id)
    # Ranks run as the cluster's node user, which may not be the launching user (root on a master
    # container, or in the simulated cluster): they write rank logs, metrics and checkpoints here.
    launch = record.launch
    owner, mode = None, 0o755
    if os.geteuid() == 0 and launch.node_uid is not None and not launch.backend.on_this_machine:
        owner = int(launch.node_uid)
    elif os.geteuid() == 0 and launch.hosts:
        mode = 0o777  # the node user is unknown on this machine: let it write
    if owner is not None and not os.path.isdir(runs_dir(Path(shared))):
        # root's first cluster run (a demo before any `user add`): runs/ as the ownership model says
        # (root's, sticky 1777: every person makes their runs there, no one renames another's), never root's 0755
        from dscluster.sharedlayout import ensure  # noqa: PLC0415

        ensure(shared, ("runs",))
    # Made through directory descriptors (fsutil.make_dir): the shared dir and runs/ may be the node
    # user's, so a symlink planted there must not take the new (node-owned) directories elsewhere.
    fsutil.make_dir(path, mode, owner=owner)
    fsutil.make_dir(path / "logs", mode, owner=owner)
    fsutil.make_dir(path / "nccl_trace", mode, owner=owner)  # PyTorch's NCCL flight recorder dumps here
    for name, text in (files or {}).items():
        fsutil.atomic_write_text(path / Path(name).name, text)
    # `prepare` dates the record; one made elsewhere is dated here (the caller then reads it back).
    write_record(path, record if record.created is not None else record.replace(created=now_iso()))
    return path


def write_record(run_dir: Path, record: RunRecord) -> None:
    fsutil.atomic_write_json(Path(run_dir) / "run.json", record.to_json())


def update_record(run_dir: Path, record: RunRecord, **changes: Any) -> RunRecord:
    """`record` with `changes`, written as run.json; returns the new record. The supervisor's one way to
    record how the run goes (it is the only writer after creation), and a forced stop's."""
    record = record.replace(**changes)
    write_record(run_dir, record)
    return record


def read_json(run_dir: Path) -> dict[str, Any]:
    """run.json as the plain JSON object on disk (checked to be a run record: an object with a run id)."""
    import json

    path = Path(run_dir) / "run.json"
    try:
        data = json.loads(fsutil.read_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        raise RunError(tr("no run record in {path}", path=run_dir),
                       tr("list runs with: dscluster runs")) from None
    except (ValueError, UnicodeDecodeError, fsutil.UnsafePath) as exc:  # JSONDecodeError is a ValueError
        raise RunError(tr("the run record {path} is damaged ({error})", path=path, error=exc), _damaged_fix()) from None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise RunError(tr("the run record {path} is damaged (not a run record: no run id)", path=path), _damaged_fix())
    return data


def read_record(run_dir: Path) -> RunRecord:
    """The run's record, typed (any version: runs.records.record reads old run.json files too)."""
    data = read_json(run_dir)
    try:
        return RunRecord.from_json(data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a key of the wrong type: edited by hand
        raise RunError(tr("the run record {path} is damaged ({error})", path=Path(run_dir) / "run.json", error=exc),
                       _damaged_fix()) from None


def _damaged_fix() -> str:
    # dscluster writes run.json atomically, so a damaged one was edited by hand or hit by a disk fault;
    # the logs, metrics and checkpoints beside it are untouched and stay where they are.
    return tr("move that run directory out of runs/ (its logs and checkpoints are unaffected) or restore "
              "run.json from a backup")


def append_event(run_dir: Path, event: str, **fields: Any) -> dict[str, Any]:
    record = {"time": now_iso(), "t": round(time.time(), 3), "event": event, **fields}
    fsutil.append_jsonl(Path(run_dir) / "events.jsonl", record)
    return record


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    events, _ = fsutil.read_jsonl(Path(run_dir) / "events.jsonl")
    return events


@dataclass(frozen=True)
class StoredRun:
    """A run record and the directory it was read from (the directory is never part of the record)."""

    record: RunRecord
    dir: Path

    @property
    def id(self) -> str:
        return self.record.id


def is_run_dir(path: Path) -> bool:
    """A run directory is a real directory: one that is itself a symlink is not a run. Any rank can write
    runs/ (the node user's), and a link planted there would have every reader (and the panel's server,
    which serves what it reads to whoever holds the lab's token) read, list or stop another directory."""
    try:
        return stat.S_ISDIR(Path(path).lstat().st_mode)
    except OSError:
        return False


def pending_record(run_dir: Path) -> RunRecord:
    """What a run directory without its run.json is: a run being created, pending. `create_run` makes the
    directory, then writes the first run.json; between the two (or while shared storage has not shown the
    file yet) a reader that lists or polls runs sees only the directory. This placeholder lives here, in
    the store, because the store's own order of writing is what makes the gap mean "pending": every view
    that shows such a run (the panel lists it; `dscluster runs` skips it) gets the same answer."""
    return RunRecord.from_json({"id": Path(run_dir).name, "status": "pending", "attempts": []})


def read_record_or_pending(run_dir: Path) -> RunRecord:
    """`read_record`, or `pending_record` while run.json is not written yet (RunError when it is damaged)."""
    if not os.path.lexists(Path(run_dir) / "run.json"):
        return pending_record(run_dir)
    return read_record(run_dir)


def list_runs(shared: Path, damaged: list[RunError] | None = None, *, pending: bool = False) -> list[StoredRun]:
    """Every readable run record under <shared>/runs, newest first. Damaged ones are skipped (one bad
    record must not hide the others, nor block stopping them); `damaged` collects why, to be shown.
    A symlink is not a run (`is_run_dir`). With `pending`, a run directory whose run.json is not written
    yet is listed as `pending_record` (the panel shows it the moment it exists)."""
    root = runs_dir(Path(shared))
    records: list[StoredRun] = []
    if not root.is_dir():
        return records
    for entry in root.iterdir():
        if not is_run_dir(entry):
            continue
        if not (entry / "run.json").exists():
            if pending and _REF_OK.match(entry.name):
                records.append(StoredRun(pending_record(entry), entry))
            continue  # not a run (yet): a directory being created, or something else
        try:
            rec = read_record(entry)
        except RunError as err:
            if damaged is not None:
                damaged.append(err)
            continue
        except OSError:
            continue
        records.append(StoredRun(rec, entry))
    # Newest first. `created` has whole seconds: runs started within one second (a script's detached launches) are
    # ordered by their first event's exact time, read only for them.
    same = Counter(_created(r) for r in records)
    records.sort(key=lambda r: (_created(r), _created_at(r.dir) if same[_created(r)] > 1 else 0.0, r.id), reverse=True)
    return records


def _created(run: StoredRun) -> str:
    return str(run.record.created or "")


def _created_at(run_dir: Path) -> float:
    """The exact time of a run's first event (events.jsonl's first line: "created", or a batch job's submission), 0.0
    where unknown. Read by fsutil's rule: the run directory is the node user's, a planted symlink or FIFO is not
    followed."""
    try:
        first = fsutil.read_bytes(Path(run_dir) / "events.jsonl", 0, 4096).split(b"\n", 1)[0]
        return float(json.loads(first or b"{}").get("t", 0.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def load_run(shared: Path, run_id: str) -> RunRecord:
    """The record of `run_id`; a unique prefix or a run name (newest run of that name) also works."""
    return read_record(resolve_run_dir(shared, run_id))


class AmbiguousRun(RunError):
    """A prefix or name that fits more than one run."""


# What a run id, a prefix of one or a run name can hold: new_run_id and safe_name write nothing else.
_REF_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# A run id is a directory name: longer than the filesystem's NAME_MAX (255 bytes on Linux filesystems)
# it could never have been created, and asking the OS for it fails with ENAMETOOLONG.
NAME_MAX = 255
PATH_MAX = 4096  # Linux's, with the terminating NUL


def check_run_ref(ref: object, *, allow_path: bool = False, setting: str = "RUN") -> str:
    """The one check of a run reference typed by a user (CLI, Python API, HTTP): a run id, a unique
    prefix of one, or a run name; with `allow_path` (the CLI) also the path of a run directory. Anything
    that can never name a run is a UsageError saying what is wrong with it, before any file is touched."""
    fix = tr("give a run id, a unique prefix of one, or a run name (dscluster runs lists them)")
    if not isinstance(ref, str) or not ref.strip():
        # A prefix match would take "" as every run's prefix: an unset shell variable must not stop a run.
        raise UsageError(tr("the run id is empty"), fix, setting=setting)
    shown = ref if len(ref) <= 60 else ref[:40] + "…" + ref[-12:]
    is_path = allow_path and os.sep in ref
    for part in ref.split(os.sep) if is_path else [ref]:
        size = len(part.encode("utf-8", "surrogateescape"))
        if size > NAME_MAX:
            raise UsageError(tr("the run id {ref!r} is {n} bytes long; a run id is a directory name, at most "
                                "{max} bytes", ref=shown, n=size, max=NAME_MAX), fix, setting=setting)
    if is_path:
        if len(os.fsencode(ref)) >= PATH_MAX:
            raise UsageError(tr("the run directory {ref!r} is {n} bytes long; a path is at most {max} bytes",
                                ref=shown, n=len(os.fsencode(ref)), max=PATH_MAX - 1), fix, setting=setting)
        if "\0" in ref:
            raise UsageError(tr("the run directory {ref!r} contains a NUL byte", ref=shown), fix, setting=setting)
        return ref
    if not _REF_OK.match(ref):
        bad = "".join(sorted({c for c in ref if not re.match(r"[A-Za-z0-9._-]", c)}))[:10]
        what = (tr("{ref!r} contains {chars!r}", ref=shown, chars=bad) if bad
                else tr("{ref!r} starts with {c!r}", ref=shown, c=ref[0]))
        raise UsageError(tr("{what}: a run id has only letters, digits, '.', '_' and '-', and starts with a "
                            "letter or digit", what=what), fix, setting=setting)
    return ref


def resolve_run_dir(shared: Path, ref: str, *, pending: bool = False) -> Path:
    """The run directory `ref` names under <shared>/runs (see `find_run`). With `pending`, a run directory
    whose run.json is not written yet is found by its exact id (see `pending_record`)."""
    check_run_ref(ref, allow_path=True)
    direct = run_path(shared, ref)
    try:
        if is_run_dir(direct) and (pending or (direct / "run.json").is_file()):
            return direct
        if os.sep in ref and (Path(ref) / "run.json").is_file():
            return Path(ref)
    except OSError as err:  # ENAMETOOLONG once joined to the runs directory, EACCES on the way
        raise UsageError(tr("cannot look up run {ref!r}: {err}", ref=ref[:60], err=err.strerror or err),
                         tr("give a run id, a unique prefix of one, or a run name (dscluster runs lists them)"),
                         setting="RUN") from None
    runs = list_runs(shared)
    matches = [r for r in runs if r.id.startswith(ref)] or [r for r in runs if r.record.name == ref]
    if not matches:
        raise RunError(tr("unknown run {ref!r}", ref=ref), tr("list runs with: dscluster runs"))
    ids = {r.id for r in matches}
    if len(ids) > 1 and not all(r.record.name == ref for r in matches):
        raise AmbiguousRun(tr("{ref!r} matches several runs: {ids}", ref=ref, ids=", ".join(sorted(ids)[:5])),
                       tr("give more of the run id"))
    return matches[0].dir


def find_run(shared_dirs: list[Path], ref: str, *, pending: bool = False) -> Path:
    """The run directory `ref` (a run id, a unique prefix of one, a run name, or a run directory's path)
    names, in the first of `shared_dirs` that holds it: the one lookup of the CLI and the Python API.
    A reference that fits several runs of one directory is an error of its own, not "unknown run"."""
    check_run_ref(ref, allow_path=True)
    errors: list[RunError] = []
    for shared in shared_dirs:
        try:
            return resolve_run_dir(shared, ref, pending=pending)
        except AmbiguousRun:
            raise
        except RunError as err:
            errors.append(err)
    raise errors[-1] if errors else RunError(tr("unknown run {ref!r}", ref=ref), tr("list runs with: dscluster runs"))


def run_locations(shared: Path | None, *, stopped_sims: bool = True) -> list[Path]:
    """Where runs may live, in the order they are looked up: the cluster's shared directory, this machine's,
    and (`stopped_sims`) those of simulated clusters that are down: a simulated cluster keeps its shared
    directory (runs, checkpoints) until `sim down --purge`, so its runs stay listed and addressable."""
    from dscluster import paths

    dirs = [Path(shared)] if shared is not None else []
    local = paths.local_shared()
    if local not in dirs:
        dirs.append(local)
    if stopped_sims:
        dirs += [d for d in sorted((paths.home() / "sims").glob("*/shared")) if d.is_dir() and d not in dirs]
    return dirs


def launch_arg(record: RunRecord, flag: str) -> str | None:
    """The value of `flag` (`--flag V` or `--flag=V`) in the program's arguments as the run was launched
    (its shown argv for a record that has no launch arguments)."""
    return arg_value(list(record.launch.args or record.argv), flag)


def arg_value(args: list, flag: str) -> str | None:
    """The value of `flag` (`--flag V` or `--flag=V`) in `args`."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return str(args[i + 1])
        if isinstance(arg, str) and arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def save_dir(run_dir: Path, record: RunRecord) -> Path:
    """Where the run's trainer writes its checkpoints: its --save-dir (relative to the launch directory),
    else the DSCLUSTER_CHECKPOINT_DIR given in the run's environment (`dscluster restart` of a user's
    script passes the old run's), else <run-dir>/checkpoints (the default under DSCLUSTER_RUN_DIR)."""
    env = record.launch.env if isinstance(record.launch.env, Mapping) else {}
    return checkpoint_dir(run_dir, list(record.launch.args or record.argv), env, record.cwd or record.launch.cwd)


def checkpoint_dir(run_dir: Path, args: list, env: Mapping[str, str], cwd: str | None) -> Path:
    """`save_dir` of a run not recorded yet: from its program's arguments, environment and directory."""
    value = arg_value(args, "--save-dir") or env.get("DSCLUSTER_CHECKPOINT_DIR")
    if not value:
        return Path(run_dir) / "checkpoints"
    path = Path(value)
    return path if path.is_absolute() or not cwd else Path(cwd) / path

"""Read run directories for the panel and the notebook API (read-only; the supervisor writes them).

Layout (runs/records/store.py): <shared>/runs/<run-id>/{run.json, events.jsonl, metrics.jsonl, logs/, checkpoints/}.
Runs are looked up and listed by the store (`store.find_run`, `store.list_runs`: a run directory that is
itself a symlink is not a run; one whose run.json is not written yet is the store's pending placeholder),
and summarized by `runs.views.summary` as `dscluster status` summarizes them. What is the panel's own stays
here: the HTTP route's run id check (one path segment), byte-offset reads so the panel polls only what is
new, log tails, and metrics thinned for a first load. A run in progress is half written by design: the
last JSONL line may be torn, logs grow; those readers tolerate it and never raise on content. Lookups
raise `RunNotFound` (a 404 at the HTTP boundary) when no run directory of that id exists.

Any rank can write a run directory, and the server serves what it reads to whoever holds the lab's
token: every file is opened through fsutil.open_beneath (no component below the run directory may be a
symlink, nor `..`). A `logs` directory pointed elsewhere (e.g. at the lab's own state directory) is
therefore empty, not served.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dscluster import fsutil
from dscluster.errors import DsclusterError, ExitCode, RunError, UsageError
from dscluster.explain import error_line, localized, no_restart_note, rank_of_file
from dscluster.i18n import tr
from dscluster.runs.leases import leasing
from dscluster.runs.records import metrics as run_metrics
from dscluster.runs.records import store
from dscluster.runs.records.owner import may_control, owner_of
from dscluster.runs.records.record import RunRecord
from dscluster.runs.views.summary import summary as run_summary

# run-id: <name>-<YYYYmmdd-HHMMSS>-<4 hex>; accept any safe name so older or hand-made runs still show.
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")
TAIL_BYTES = 64 * 1024  # first log request returns at most this much from the end


class NotFound(DsclusterError):
    """A run, log or endpoint that does not exist (404 at the HTTP boundary)."""

    exit_code = ExitCode.RUN


class RunNotFound(NotFound):
    pass


@dataclass(frozen=True)
class RunRef:
    id: str
    path: Path


def check_run_id(run_id: str) -> str:
    """The store's check (the CLI's and the API's too), then the HTTP route's own: one path segment."""
    store.check_run_ref(run_id, setting="run_id")  # the HTTP API names its field
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise UsageError(tr("invalid run id {run_id!r}", run_id=str(run_id)[:80]),
                         tr("use an id from `dscluster runs`"), setting="run_id")
    return run_id


def _open(base: Path, rel: str) -> int:
    """A descriptor of base/rel by fsutil.open_beneath's rule (OSError otherwise)."""
    return fsutil.open_beneath(base, rel)


def _shared(runs_dirs: list[Path]) -> list[Path]:
    return [Path(d).parent for d in runs_dirs]  # each a <shared>/runs (ClusterView.runs_dirs)


def find_run(runs_dirs: list[Path], run_id: str) -> RunRef:
    """The run `run_id` names in the first of `runs_dirs` that holds it, by the store's lookup (an id, a
    unique prefix of one, or a run name; a run whose run.json is not written yet by its exact id)."""
    check_run_id(run_id)
    try:
        path = store.find_run(_shared(runs_dirs), run_id, pending=True)
    except store.AmbiguousRun:
        raise
    except RunError:
        raise RunNotFound(tr("no run {run_id!r}", run_id=run_id), tr("list runs with `dscluster runs`"),
                          setting="run_id") from None
    return RunRef(path.name, path)


def record_of(ref: RunRef) -> RunRecord:
    """run.json, or the store's placeholder while the supervisor has not written it yet (`pending_record`)."""
    return store.read_record_or_pending(ref.path)


def run_record(ref: RunRef, record: RunRecord | None = None) -> dict:
    """The record (`record_of`, unless already read) as the panel's JSON: the typed record's own, and its
    directory."""
    out = (record if record is not None else record_of(ref)).to_json()
    out.setdefault("id", ref.id)
    out["run_dir"] = str(ref.path)
    return out


def total_steps(record: RunRecord) -> int | None:
    value = store.launch_arg(record, "--steps")
    return int(value) if value and value.isdigit() else None


def save_dir(ref: RunRef) -> Path:
    """Where the trainer saves this run's checkpoints: --save-dir if given, else <run>/checkpoints."""
    return store.save_dir(ref.path, record_of(ref))


def summary(ref: RunRef, record: RunRecord | None = None) -> dict:
    """The run's summary (runs.views.summary, as `dscluster status` has it) in the fields the panel reads."""
    rec = record if record is not None else record_of(ref)
    run = run_summary(rec, ref.path)
    last = run.metrics or {}
    ds = rec.ds_config if isinstance(rec.ds_config, Mapping) else {}
    cluster = rec.cluster
    if run.scheduler:  # the panel's run list shows `cluster`: the scheduler's side rides along there
        cluster = f"{cluster} · {rec.launch.backend.job_brief(run.scheduler, long=True)}".strip()
    return {
        "id": ref.id,
        "name": rec.name or ref.id.rsplit("-", 3)[0],
        "status": run.status,
        "created": rec.created,
        "cluster": cluster,
        "scheduler": run.scheduler,
        "world_size": rec.world_size,
        "attempts": len(run.attempts),
        "exit_code": rec.exit_code,
        "step": last.get("step"),
        "total_steps": total_steps(rec),
        "loss": last.get("loss"),
        "tokens_per_s": last.get("tokens_per_s"),
        "train_batch_size": ds.get("train_batch_size"),
        "explanation": shown_explanation(run.explanation),
        "owner": owner_of(rec, ref.path),
        "mine": may_control(rec, ref.path),  # the panel offers stop/restart only for these (runs/records/owner.py)
    }


def shown_explanation(recorded: dict | None) -> dict | None:
    """The record's explanation with cause and fix in this server's language, placeholders filled in."""
    if not isinstance(recorded, dict):
        return None
    cause, fix = localized(recorded)
    return {**recorded, "cause": cause, "fix": fix, "error_line": error_line(recorded.get("error")),
            "no_restart_note": no_restart_note(recorded)}


def list_runs(runs_dirs: list[Path]) -> list[dict]:
    """Every run under the given runs dirs (the store's listing, pending ones included), newest first (by
    created, then id). A run id is a directory name; the first runs dir that holds it wins."""
    seen: dict[str, dict] = {}
    for shared in _shared(runs_dirs):
        for stored in store.list_runs(shared, pending=True):
            path = stored.dir
            if path.name in seen or not _RUN_ID.match(path.name):
                continue  # the HTTP route takes one path segment: a name it cannot name is not listed
            seen[path.name] = summary(RunRef(path.name, path), stored.record)
    held = leasing.board(leasing.places(_shared(runs_dirs)))  # the GPUs each run holds (runs/leases/leasing.py)
    for run_id, shown in seen.items():
        shown["gpus"] = [str(g) for g in held.holding(run_id)]
        shown["queue_position"] = next((w.position for w in held.queue if w.claim.run_id == run_id), None)
    return sorted(seen.values(), key=lambda r: (str(r.get("created") or ""), r["id"]), reverse=True)


def read_since(base: Path, rel: str, offset: int) -> dict:
    offset = max(0, int(offset))
    try:
        with os.fdopen(_open(base, rel), "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        data = b""
    records, next_offset = fsutil.parse_jsonl(data, offset)
    return {"records": records, "offset": next_offset}


def events(ref: RunRef, offset: int = 0) -> dict:
    return read_since(ref.path, "events.jsonl", offset)


def metrics(ref: RunRef, offset: int = 0, max_records: int | None = None) -> dict:
    """metrics.jsonl since `offset`; with `max_records`, evenly thinned (the last record always kept) so
    the first load of a 100k-step run stays small. `stride` says how much was thinned (1: nothing)."""
    records, next_offset = run_metrics.read(ref.path, offset)
    result = {"records": records, "offset": next_offset}
    stride = 1
    if max_records and len(records) > max_records:
        stride = -(-len(records) // max_records)
        records = records[::stride] if (len(records) - 1) % stride == 0 else records[::stride] + [records[-1]]
    result.update(records=records, stride=stride)
    return result


def _regular_files(logs: Path):
    """(dir, name, size) of the regular files under `logs`. fwalk without following symlinks: a `logs`
    that is a symlink, or a symlinked subdirectory or file in it (any rank can write logs/), yields nothing
    from elsewhere; a missing logs/ yields nothing."""
    try:
        for root, _dirs, files, dfd in os.fwalk(logs, follow_symlinks=False):
            for name in files:
                try:
                    info = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    yield root, name, info.st_size
    except OSError:
        return


def log_files(ref: RunRef) -> list[dict]:
    """Log files under logs/: launcher.log first, then the per-rank logs by rank number (DeepSpeed's
    `<launch time>_rank<N>.log`: each node stamps its own launch time, so by name rank 2 can come before
    rank 0; a rank's earlier attempts before its later ones), then the supervisor's and the watchdog's."""
    found = []
    if not store.is_run_dir(ref.path):
        return found
    logs = ref.path / "logs"
    found.extend({"name": str((Path(root) / name).relative_to(logs)), "size": size} for root, name, size in _regular_files(logs))

    def order(item: dict) -> tuple:
        name = item["name"]
        parts = [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
        rank = rank_of_file(name)
        group = 0 if name.startswith("launcher") else 1 if rank is not None or "rank" in name else 2
        return (group, rank if rank is not None else -1, [str(p).zfill(8) if isinstance(p, int) else p for p in parts])

    return sorted(found, key=order)


def log_tail(ref: RunRef, name: str, offset: int | None = None, max_bytes: int = TAIL_BYTES) -> dict:
    """Text of logs/<name> from byte `offset` (None: the last `max_bytes`); returns the next offset.

    Only names that `log_files` lists are readable, so a crafted name cannot escape the run dir.
    """
    known = {f["name"] for f in log_files(ref)}
    if name not in known:
        raise RunNotFound(tr("run {run_id} has no log {name!r}", run_id=ref.id, name=str(name)[:120]),
                          tr("pick one of: {names}", names=", ".join(sorted(known)) or "-"), setting="log")
    try:
        fd = _open(ref.path, f"logs/{name}")
    except OSError:
        raise RunNotFound(tr("run {run_id} has no log {name!r}", run_id=ref.id, name=str(name)[:120]),
                          tr("pick one of: {names}", names=", ".join(sorted(known)) or "-"), setting="log") from None
    with os.fdopen(fd, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        start = max(0, size - max_bytes) if offset is None or offset < 0 else min(int(offset), size)
        truncated = offset is not None and offset >= 0 and size - start > max_bytes * 4
        if truncated:  # far behind: skip ahead rather than ship megabytes to the browser
            start = size - max_bytes
        f.seek(start)
        data = f.read(size - start)
    return {"name": name, "text": data.decode("utf-8", errors="replace"), "offset": start + len(data),
            "size": size, "skipped": truncated}


def checkpoints(ref: RunRef) -> list[dict]:
    """Every step in the run's save dir, by the checkpoint protocol's own reader (train/checkpoint): committed
    = has COMMIT.json; `damage` says what is wrong with a committed step, as `dscluster ckpt` does."""
    from dscluster.train.commits import damage, latest_tag, read_commit, step_dirs

    folder = save_dir(ref)
    latest = latest_tag(folder)
    own = [{"tag": s.tag, "step": s.step, "committed": s.committed, "latest": s.tag == latest,
            "commit": read_commit(s.path) if s.committed else None,
            "damage": damage(s.path) if s.committed else None, "path": str(s.path)} for s in step_dirs(folder)]
    return own + hf_checkpoints(ref)


def hf_checkpoints(ref: RunRef) -> list[dict]:
    """A Hugging Face Trainer's checkpoint-N of the run (runs/views/hfview.py), in the same shape: complete ones as
    committed, torn ones as incomplete with the reason (`torn`)."""
    from dscluster.runs.views.hfview import hf_checkpoints as found

    items = found(record_of(ref), ref.path)
    newest = max((c.step for c in items if c.complete), default=None)
    return [{"tag": c.name, "step": c.step, "committed": c.complete, "latest": c.complete and c.step == newest,
             "commit": None, "damage": None, "torn": c.why, "hf": True, "path": str(c.path)} for c in items]

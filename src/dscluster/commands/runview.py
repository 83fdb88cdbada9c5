"""What the run commands share: finding a run (`--cluster`, the places runs live), waiting on one with its
logs streamed, and printing how it ended. `runs`, `status`, `logs`, `stop`, `restart`, `ckpt`, `launch`,
`demo`, `explain` and `stacks` import it; it imports no command module."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from dscluster import console
from dscluster import explain as explainer
from dscluster.errors import ConfigError, ExitCode
from dscluster.i18n import tr, tr_n
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord


def shared_dirs(cluster: str | None) -> list[Path]:
    """Where runs may live: the cluster's shared dir (given, or the default spec) and the local one."""
    dirs: list[Path] = []
    try:
        from dscluster.cluster.spec import SPEC_FILENAME, resolve_spec

        dirs.append(Path(resolve_spec(cluster).shared_dir))
    except ConfigError as err:
        if cluster:
            raise
        if os.environ.get("DSCLUSTER_CLUSTER") or Path(SPEC_FILENAME).is_file():
            # A default spec that exists but is broken: say so, or its runs would silently vanish from view.
            print(f"{console.WARN} " + tr("the cluster's runs are not shown: {error}", error=err), file=sys.stderr)
    except ImportError:
        pass
    return store.run_locations(dirs[0] if dirs else None, stopped_sims=not cluster)


def find_run(ref: str, cluster: str | None) -> Path:
    store.check_run_ref(ref, allow_path=True)  # before the cluster is looked up: the typo is the news
    return store.find_run(shared_dirs(cluster), ref)


def add_cluster(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec whose shared directory holds the runs"))


def shown_time(iso: str | None) -> str:
    """A record's timestamp in this machine's local time, one format whatever wrote it (+00:00 or +0000)."""
    import datetime as _dt

    if not iso:
        return "-"
    try:
        return _dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso


def queued_note(status: str) -> str:
    """A second line for a run started with --wait whose GPUs are taken ("" otherwise)."""
    if status != "queued":
        return ""
    return "\n  " + tr("queued until its GPUs are free: dscluster queue shows who holds them")


def glyph(status: str) -> str:
    return {"succeeded": console.OK, "failed": console.FAIL, "stopped": console.WARN, "lost": console.FAIL,
            "restarting": console.RETRY}.get(status, "…")


def run_exit_text(code: int, status: str | None) -> str:
    """A run's exit code as `dscluster launch` returns it. 130 for a stopped run is the code of an
    interrupted command (128 + SIGINT, what a shell reports for Ctrl-C), whatever signal ended the ranks."""
    if status == "stopped" and code == ExitCode.INTERRUPTED:
        return tr("exit {code}, as for Ctrl-C", code=code)
    return tr("exit {code}", code=code)


def wait_attached(run_dir: Path, on_tick=None) -> RunRecord:
    """Until the run ends: stream its logs (or call on_tick, e.g. a progress bar). Ctrl-C stops the run on
    every node and waits for it. Returns the final record."""
    from dscluster.runs.supervising.control import stop_run
    from dscluster.runs.views.attach import follow

    try:
        if on_tick is None:
            return follow(run_dir, sys.stdout)
        while True:
            on_tick()
            record = store.read_record(run_dir)
            if record.status in store.FINISHED:
                on_tick()
                return record
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("\n" + tr("stopping the run on every node (Ctrl-C)…"), file=sys.stderr, flush=True)
        record, _ = stop_run(run_dir)
        return record


def print_outcome(record: RunRecord) -> None:
    st = record.status
    console.say(f"{glyph(st)} " + tr("run {id} {status} ({exit}, {attempts})", id=record.id, status=tr(st),
                                 exit=run_exit_text(record.exit_code, st),
                                 attempts=tr_n(len(record.attempts), "{n} attempt", "{n} attempts")))
    exp = record.explanation
    if exp and st != "succeeded":
        cause, fix = explainer.localized(exp)
        if line := explainer.error_line(exp.get("error")):
            console.say(f"  {tr('first error')}: {line}")
        console.say(f"  {tr('cause')}: {cause}\n  {tr('fix')}: {fix}")
        if (note := explainer.no_restart_note(exp)) is not None:
            console.say(f"  {note}")


def exit_code_of(record: RunRecord) -> int:
    code = record.exit_code
    return int(code) if code is not None else ExitCode.RUN


def attach_and_wait(run_dir: Path) -> int:
    """Stream the logs until the run ends; Ctrl-C stops the run (on every node)."""
    record = wait_attached(run_dir)
    print_outcome(record)
    print(console.next_steps(f"dscluster status {record.id}", f"dscluster logs {record.id}"))
    return exit_code_of(record)

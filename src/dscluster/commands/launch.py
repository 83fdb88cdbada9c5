"""`dscluster launch`: start a supervised multi-node DeepSpeed run."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from dscluster import console
from dscluster.commands.argtypes import MAX_PROCS, count, positive_seconds, seconds
from dscluster.commands.backendargs import add_backend_options, batch_requested, scheduler_request
from dscluster.commands.runnerargs import add_runner_flags, flags_from_args
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.launcher import backends
from dscluster.resultout import captured, result_stdout
from dscluster.runs.preparing.prepare import dry_run_text, first_run_notice, prepare
from dscluster.runs.records.record import RunRecord
from dscluster.runs.records.request import DEFAULTS, FIELDS, RunRequest
from dscluster.sim.names import MAX_NODES


def add_launch_options(p: argparse.ArgumentParser, *, demo: bool = False) -> None:
    """Launch's options; `dscluster demo` accepts the same ones (its own --name, and --procs for local runs)."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec (dscluster.toml) or hostfile"))
    where.add_argument("-H", "--hostfile", metavar="H", help=tr("a DeepSpeed hostfile (ssh settings from the cluster spec)"))
    if demo:
        where.add_argument("--nodes", type=count(1, MAX_NODES), metavar="N",
                           help=tr("run on a simulated N-node cluster on this machine (root; started when needed)"))
        p.add_argument("--sim-name", default="demo", help=argparse.SUPPRESS)
    else:
        where.add_argument("--local", type=count(1, MAX_PROCS), metavar="N", help=tr("run N processes on this machine only, no ssh"))
    p.add_argument("--launcher", metavar="{" + ",".join(backends.spec_names()) + "}", help=tr("override the spec's launcher"))
    if not demo:
        add_backend_options(p, "launch")
    if not demo:
        p.add_argument("--name", help=tr("run name (the run id starts with it)"))
    p.add_argument("--env", action="append", default=[], metavar="K[=V]",
                   help=tr("environment for every rank; --env NAME takes NAME's value from this environment "
                           "(secret-looking names never reach a command line or a log)"))
    p.add_argument("--max-restarts", type=count(0), default=DEFAULTS["max_restarts"], metavar="N",
                   help=tr("restarts from the last committed checkpoint after a failure (default {n})",
                           n=DEFAULTS["max_restarts"]))
    p.add_argument("--restart-wait", type=seconds, default=DEFAULTS["restart_wait"], metavar="S",
                   help=tr("before a restart, wait up to S seconds for lost nodes to answer again (default {s:.0f})",
                           s=DEFAULTS["restart_wait"]))
    if not demo:
        p.add_argument("--allow-shrink", action="store_true",
                       help=tr("when a node does not come back within --restart-wait, continue on the nodes that remain "
                               "(from the last committed step, the global batch kept where it divides)"))
    if not demo:
        p.add_argument("--exclude-unhealthy", action="store_true",
                       help=tr("leave out the nodes that doctor's last check or this cluster's last failed run points "
                               "to (and those failing the pre-flight checks now); with --allow-shrink, a restart also "
                               "leaves out the node the failure was on"))
    p.add_argument("--stall-timeout", type=seconds, default=DEFAULTS["stall_timeout"], metavar="S",
                   help=tr("fail when logs and metrics do not grow for S seconds (0: off; default {s:.0f})",
                           s=DEFAULTS["stall_timeout"]))
    p.add_argument("--heartbeat-timeout", type=positive_seconds, default=DEFAULTS["heartbeat_timeout"], metavar="S",
                   help=argparse.SUPPRESS)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--attach", dest="attach", action="store_true", default=None,
                      help=tr("stream the logs here; Ctrl-C stops the run (default in a terminal)"))
    mode.add_argument("--detach", dest="attach", action="store_false", help=tr("print the run id and return"))
    p.add_argument("--dry-run", action="store_true", help=tr("print the exact commands and files, start nothing"))
    p.add_argument("--wait", action="store_true", help=tr("when another run holds these GPUs, queue this run until "
                                                          "they are free (dscluster queue) instead of refusing it"))
    p.add_argument("--share-gpus", action="store_true",
                   help=tr("take no GPU leases: run alongside other runs on the same GPUs (small jobs that fit "
                           "together); such a run is never refused or queued, and never counted"))
    p.add_argument("--json", action="store_true", help=tr("print the run record's summary as JSON (implies --detach "
                                                          "unless --attach is given: then the summary at the end)"))
    p.add_argument("--skip-doctor", action="store_true", help=argparse.SUPPRESS)
    add_runner_flags(p, demo=demo)


def register(sub) -> None:
    p = sub.add_parser("launch", help=tr("start a supervised DeepSpeed run across the cluster"),
                       description=tr("Start DeepSpeed's launcher across the cluster, supervised: run directory, "
                                      "per-rank logs, fail-fast teardown on every node, restarts from the last "
                                      "committed checkpoint."))
    add_launch_options(p)
    p.add_argument("-m", "--module", dest="module", action="store_true", help=tr("the program is a module (python -m)"))
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS...]")
    p.set_defaults(func=handle)


def request_from_args(args: argparse.Namespace, command: list[str], module: bool, *, scheduler=None,
                      **given) -> RunRequest:
    """The run request of launch's (or demo's) parsed arguments: each option whose `dest` names a setting of
    the request (runs/records/request.py) is passed on as it is; `given` adds or overrides settings (None: the
    default)."""
    settings = {k: getattr(args, k) for k in FIELDS if hasattr(args, k)}
    return RunRequest.of(command=command, **{**settings, "module": module, **given}, runner=flags_from_args(args),
                         scheduler=scheduler)


def handle(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    module = args.module
    if command[:1] == ["-m"]:
        module, command = True, command[1:]
    opts = request_from_args(args, command, module, scheduler=scheduler_request(args))
    if batch_requested(args):
        from dscluster.commands.batch import submit

        return submit(opts, attach=args.attach, dry_run=args.dry_run, as_json=args.json)
    return start(opts, attach=args.attach, dry_run=args.dry_run, as_json=args.json)


def start(opts: RunRequest, *, attach: bool | None, dry_run: bool, as_json: bool = False) -> int:
    """Validate, then start (or print) the run through the runs service. Shared by `launch` and `demo`. When
    a script reads stdout (detached into a pipe, or --json) it gets the result alone: everything before it
    goes to stderr."""
    if dry_run:
        print(dry_run_text(prepare(opts, dry_run=True)))
        print(console.next_steps(tr("run it: the same command without --dry-run")))
        return ExitCode.OK
    from dscluster.runs import service

    if attach is None:
        attach = sys.stdout.isatty() and not as_json
    with result_stdout(as_json or (not attach and captured())) as out:
        started = service.start(opts)
        return report_started(started.run_dir, started.prepared.record, attach=attach, as_json=as_json, out=out)


def report_started(run_dir, record: RunRecord, *, attach: bool, as_json: bool, out=None) -> int:
    """What a started run prints. Detached with stdout not a terminal (`run=$(dscluster launch --detach ...)`):
    the run id alone on stdout, the rest on stderr, like `docker run -d` or a batch scheduler's
    `--parsable` submission. --json:
    the run record's summary (at once when detached, at the end when attached). `out`: where the result
    goes (the real stdout kept aside by `result_stdout`; default sys.stdout)."""
    from dscluster.commands.runview import attach_and_wait, exit_code_of, print_outcome, wait_attached

    run_id = record.id
    out = out or sys.stdout
    plain = not attach and captured(out)
    talk = sys.stderr if plain or as_json else sys.stdout
    if record.status == "queued":  # --wait: its GPUs are taken; its supervisor starts it in its turn
        print(tr("{ok} run {id} is queued for its GPUs on {where} (world size {n}): dscluster queue shows who holds "
                 "them", ok=console.RETRY, id=run_id, where=record.cluster, n=record.world_size), file=talk, flush=True)
    else:
        print(tr("{ok} run {id} started on {where} (world size {n})", ok=console.OK, id=run_id, where=record.cluster,
                 n=record.world_size), file=talk, flush=True)
    from dscluster.runs.preparing.exclude import status_lines as excluded_lines

    for line in excluded_lines(record.excluded):  # before any output of the run: what it runs without, and why
        print(line, file=talk, flush=True)
    notice = first_run_notice(record)
    if notice:  # minutes of silence otherwise: say what the ranks are doing before their first step
        print(f"{console.WARN} {notice}", file=talk, flush=True)
    auto = auto_notice(record)
    if auto:
        print(f"  {auto}", file=talk, flush=True)
    if not attach:
        if as_json:
            print(json.dumps(run_summary(run_dir), indent=2, default=str), file=out, flush=True)
        elif plain:
            print(run_id, file=out, flush=True)
        print(console.next_steps(f"dscluster logs {run_id} -f", f"dscluster status {run_id}",
                                 f"dscluster stop {run_id}"), file=talk, flush=True)
        return ExitCode.OK
    if not as_json:
        return attach_and_wait(run_dir)
    with contextlib.redirect_stdout(sys.stderr):  # the logs stream to stderr, the summary alone to stdout
        final = wait_attached(run_dir)
        print_outcome(final)
    print(json.dumps(run_summary(run_dir), indent=2, default=str), file=out, flush=True)
    return exit_code_of(final)


def auto_notice(record: RunRecord) -> str | None:
    """The line on a Hugging Face ds_config's "auto" values (runs.preparing.program.auto_note), or None."""
    from dscluster.runs.preparing.program import auto_note

    ds = record.ds_config
    return auto_note(dict(ds), int(record.world_size or 1)) if isinstance(ds, dict) else None


def run_summary(run_dir) -> dict:
    from dscluster.commands.runs import summary  # noqa: PLC0415 - the views below the commands, read when printed

    return summary(run_dir)

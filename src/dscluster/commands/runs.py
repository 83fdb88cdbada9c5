"""`dscluster runs | status | logs | ckpt | restart | stop`: reading and controlling supervised runs (the
helpers every run command shares are in runview.py, `ckpt` in ckpt.py)."""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path

from dscluster import console
from dscluster import explain as explainer
from dscluster.commands import ckpt, restart
from dscluster.commands.argtypes import count, seconds
from dscluster.commands.runview import (
    add_cluster,
    find_run,
    glyph,
    print_outcome,
    run_exit_text,
    shared_dirs,
    shown_time,
)
from dscluster.errors import ExitCode, RunError, UsageError
from dscluster.i18n import tr
from dscluster.runs.leases import leasing
from dscluster.runs.preparing.shrink import status_lines as shrink_status_lines
from dscluster.runs.records import store
from dscluster.runs.records.owner import check_may_control, owner_of
from dscluster.runs.records.record import Attempt, RunRecord
from dscluster.runs.views.summary import RunSummary, ShownAttempt


def register(sub) -> None:
    p = sub.add_parser("runs", help=tr("list runs"))
    add_cluster(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("status", help=tr("a run's state, attempts, checkpoint and failure explanation"),
                       epilog=tr("exit status: 5 when the run failed; 0 in every other state (pending, running, "
                                 "restarting, succeeded, stopped, lost)"))
    p.add_argument("run", metavar="RUN")
    add_cluster(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("logs", help=tr("a run's logs, [node rank]-prefixed"))
    p.add_argument("run", metavar="RUN")
    add_cluster(p)
    p.add_argument("-f", "--follow", action="store_true", help=tr("keep printing until the run finishes"))
    p.add_argument("--rank", type=count(0))
    p.add_argument("--node")
    p.set_defaults(func=cmd_logs)

    p = sub.add_parser("ckpt", help=tr("a run's committed checkpoints; verify one, or export it as a model"),
                       usage="dscluster ckpt [verify|export] RUN [--step N] [--format fp32|safetensors|hf] [--out PATH]")
    p.add_argument("words", nargs="+", metavar="[verify|export] RUN",
                   help=tr("RUN lists the committed steps; verify RUN re-reads a step against its COMMIT.json and "
                           "loads it on CPU; export RUN writes a model that loads without DeepSpeed"))
    add_cluster(p)
    p.add_argument("--step", type=count(0), help=tr("the committed step (default: the newest)"))
    p.add_argument("--format", choices=("fp32", "safetensors", "hf"), default="safetensors",
                   help=tr("export: fp32 (torch.save state dict), safetensors, or hf (config.json + safetensors, "
                           "reference GPT); default safetensors"))
    p.add_argument("--out", metavar="PATH", help=tr("export: where to write (default <run-dir>/export/step-N.FORMAT)"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=ckpt.cmd_ckpt)

    p = sub.add_parser("restart", help=tr("a new run of a finished run's program, settings and environment, "
                                          "resuming from its newest committed checkpoint"))
    p.add_argument("run", metavar="RUN")
    add_cluster(p)
    p.add_argument("--env", action="append", default=[], metavar="K[=V]",
                   help=tr("secret values again (never recorded): --env HF_TOKEN takes it from this environment"))
    p.add_argument("--hostfile", metavar="H", help=tr("restart on these nodes instead (e.g. the ones that remain "
                                                       "after a node is lost for good)"))
    p.add_argument("--hosts", metavar="H1,H2", help=tr("restart on these nodes of the cluster spec (e.g. the ones "
                                                      "that remain after a node is lost for good)"))
    p.add_argument("--local", type=count(1), metavar="N", help=tr("restart as N processes on this machine"))
    p.set_defaults(func=restart.cmd_restart)

    p = sub.add_parser("stop", help=tr("stop a run on every node (graceful, then forced)"))
    p.add_argument("run", metavar="RUN")
    add_cluster(p)
    p.add_argument("--timeout", type=seconds, default=None, help=tr("seconds before forcing"))
    p.set_defaults(func=cmd_stop)


def cmd_runs(args) -> int:
    damaged: list[RunError] = []
    # `--cluster X`: that cluster's runs only (its shared directory is the first place); without it, every
    # place runs may live (the default cluster's, this machine's, stopped simulated clusters').
    places = shared_dirs(args.cluster)[:1] if args.cluster else shared_dirs(None)
    stored = [r for shared in places for r in store.list_runs(shared, damaged)]
    for err in damaged:
        print(f"{console.WARN} {err.message}\n  {tr('fix')}: {err.hint}", file=sys.stderr)
    if args.json:
        print(json.dumps([{**{k: v for k, v in r.record.to_json().items() if k != "launch"}, "_dir": str(r.dir)}
                          for r in stored], indent=2, default=str))
        return ExitCode.OK
    records = [r.record for r in stored]
    if not records:
        print(tr("no runs yet"))
        print(console.next_steps("dscluster launch train.py --deepspeed --deepspeed_config ds_config.json",
                                 "dscluster demo"))
        return ExitCode.OK
    from dscluster.runs.views.summary import summary

    # As `status` and the panel show each run: the checkpoint column looks where the run saves (--save-dir).
    shown = [summary(r.record, r.dir, live=False) for r in stored]
    rows = [[glyph(s.status) + " " + r.id + (f" ({r.launch.backend.job_brief(s.scheduler)})" if s.scheduler else ""),
             tr(s.status), owner_of(r, d.dir) or "-", str(len(r.attempts)),
             str(r.world_size if r.world_size is not None else ""),
             str(s.last_checkpoint_step if s.last_checkpoint_step is not None else "-"), shown_time(r.created)]
            for r, s, d in zip(records, shown, stored)]
    print(console.table([tr("run"), tr("status"), tr("owner"), tr("attempts"), tr("world"), tr("ckpt step"),
                         tr("created")], rows))
    print(console.next_steps("dscluster status RUN", "dscluster logs RUN -f"))
    return ExitCode.OK


def status_view(record: RunRecord, run_dir: Path | None = None) -> RunSummary:
    """The run as `status` shows it: runs.views.summary's, the one every view shares."""
    from dscluster.runs.views.summary import summary

    return summary(record, run_dir)


_EXIT_ON = re.compile(r"^exit (-?\d+)(?: on (\S+))?$")


def attempt_outcome(attempt: Attempt) -> str:
    """An attempt's code and reason as one localized phrase. A negative code is the signal that ended
    DeepSpeed's runner (-15: the SIGTERM of a stop), named rather than shown as an exit code."""
    code = attempt.rank_exit_code or attempt.exit_code
    reason = attempt.reason or ""
    if isinstance(code, int) and code < 0:
        try:
            shown = tr("ended by {signal}", signal=signal.Signals(-code).name)
        except ValueError:
            shown = tr("ended by signal {n}", n=-code)
    else:
        shown = tr("exit {code}", code=code) if code is not None else ""
    match = _EXIT_ON.match(reason)
    if match and str(code) == match.group(1):  # "exit 3 on node1" repeats the code: say only the node
        reason = tr("on {node}", node=match.group(2)) if match.group(2) else ""
    elif reason in ("stopped", "succeeded", "failed"):
        reason = tr(reason)
    return "  ".join(part for part in (shown, reason) if part)


def cmd_status(args) -> int:
    run_dir = find_run(args.run, args.cluster)
    view = status_view(store.read_record(run_dir), run_dir)
    if args.json:
        print(json.dumps({**view.to_json(), "run_dir": str(run_dir)}, indent=2, default=str))
        return status_exit_code(view.status)
    st = view.status
    console.say(f"{glyph(st)} {view.id}  {tr(st)}" + (f"  ({run_exit_text(view.exit_code, st)})"
                                                 if view.exit_code is not None else ""))
    console.say(f"  {tr('directory')}: {run_dir}")
    console.say(f"  {tr('owner')}: {owner_of(view.record, run_dir) or '-'}")
    hf_last = view.record.last_hf_checkpoint
    console.say(f"  {tr('last committed checkpoint')}: " + (tr("step {n}", n=view.last_checkpoint_step)
                                                      if view.last_checkpoint_step is not None else
                                                      hf_last if hf_last else "-"))
    for line in hf_checkpoint_lines(view.record, run_dir):
        console.say(f"    {line}")
    if view.scheduler:
        console.say("  " + view.record.launch.backend.job_line(view.scheduler))
    shown = {k: v for k, v in (view.metrics or {}).items()
             if k not in ("time", "elapsed_s", "source", "samples", "event", "sample") and isinstance(v, (int, float))}
    first = ("step", "loss", "val_loss", "lr", "tokens_per_s")  # then the rest as logged
    shown = {**{k: shown[k] for k in first if k in shown}, **shown}
    if shown:
        console.say(f"  {tr('last metrics')}: " + "  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                                     for k, v in shown.items()))
    _print_attempts(view)
    from dscluster.runs.preparing.exclude import status_lines as excluded_lines

    for line in excluded_lines(view.record.excluded) + shrink_status_lines(view):
        console.say(f"  {line}")
    if view.notice:
        console.say(f"  {console.RETRY} {view.notice}")
    if st == "queued":  # --wait: who holds the GPUs it waits for (runs/leases/leasing.py)
        console.say(f"  {console.RETRY} " + leasing.queue_line(view.id, [run_dir.parent.parent]))
    if view.waiting_for and st == "restarting":
        console.say(f"  {console.RETRY} " + tr("waiting for {nodes} to come back before restarting",
                                         nodes=", ".join(view.waiting_for)))
    exp = view.explanation
    if exp and st not in ("succeeded",):
        _print_explanation(exp, len(view.attempts))
    nexts = [f"dscluster logs {view.id}" + (" -f" if st in store.ACTIVE else "")]
    rank = ((exp or {}).get("error") or {}).get("rank") if st not in ("succeeded",) else None
    if isinstance(rank, int):
        nexts = [f"dscluster logs {view.id} --rank {rank}"]
    if st in store.ACTIVE:
        nexts.append(f"dscluster stop {view.id}")
    console.say(console.next_steps(*nexts))
    return status_exit_code(st)


def _print_attempts(view) -> None:
    """One line per attempt (with whether it resumed), and how often the supervisor restarted the run."""
    for a in view.attempts:
        console.say(f"  {tr('attempt')} {a.attempt.n}: {shown_time(a.attempt.started)} → "
              f"{shown_time(a.attempt.ended) if a.attempt.ended else '…'}  {attempt_outcome(a.attempt)}".rstrip())
        if (note := resume_note(a)) is not None:
            console.say(f"    {note}")
    restarts = len(view.attempts) - 1
    if restarts > 0:  # the supervisor's own restarts, beside the attempts they started
        console.say(f"  {console.RETRY} " + tr("restarted by its supervisor {n} time(s) (at most {max})", n=restarts,
                                         max=int(view.record.launch.supervision.max_restarts)))


def _print_explanation(exp: dict, attempts: int) -> None:
    """The first failing rank's own words first, then the cause (of which attempt, when there were several),
    what was seen, the fix, and why the run was not restarted."""
    cause, fix = explainer.localized(exp)
    line = explainer.error_line(exp.get("error"))
    if line:  # the first failing rank's own words, before anything said about them
        console.say(f"  {console.FAIL} {tr('first error')}: {line}")
    which = exp.get("attempt") if attempts > 1 else None  # the attempt whose ending it explains
    label = tr("cause (attempt {n})", n=which) if isinstance(which, int) else tr("cause")
    console.say(f"  {console.FAIL} {label}: {cause}")
    if exp.get("evidence") and (not line or exp["evidence"] not in line):
        console.say(f"    {tr('seen')}: {exp['evidence']}")
    console.say(f"    {tr('fix')}: {fix}")
    if (note := explainer.no_restart_note(exp)) is not None:
        console.say(f"  {console.WARN} {note}")


def status_exit_code(shown: str) -> int:
    """`dscluster status`'s exit code, stable for scripts (`dscluster status RUN || alert`): ExitCode.RUN when
    the run failed, 0 for every other state: a stopped run (stopping is what the user asked for), and a lost
    one (its supervisor is gone; its outcome is unknown, and `dscluster stop` then `restart` are the fix)."""
    return ExitCode.RUN if shown == "failed" else ExitCode.OK


def hf_checkpoint_lines(record: RunRecord, run_dir: Path) -> list[str]:
    """A Hugging Face Trainer's checkpoint-N of the run, complete or torn (dscluster/hfckpt.py), and the
    torn ones moved aside."""
    from dscluster.runs.views.hfview import hf_checkpoints

    lines = []
    for c in hf_checkpoints(record, run_dir):
        if c.complete:
            lines.append(f"{console.OK} {c.path}" + ("" if not c.exact else "  " + tr("(committed by dscluster.hf)")))
        else:
            lines.append(f"{console.WARN} {c.path}  " + tr("torn: {why}", why=c.why))
    return lines


def resume_note(shown: ShownAttempt) -> str | None:
    """One line on whether an attempt that had a committed step to resume from did resume from it."""
    expected, got = shown.attempt.resume_step, shown.resumed
    hf_note = _hf_resume_note(shown)
    if hf_note is not None:
        return hf_note
    if got and got.get("step") is not None:
        return f"{console.OK} " + tr("resumed from step-{n} ({via})", n=got["step"], via=got.get("via") or "?")
    if expected is None:
        if int(shown.attempt.n or 1) > 1:  # a restart with nothing committed to resume from
            return f"{console.WARN} " + tr(
                "started from scratch: no checkpoint was committed before this attempt (a script commits them with "
                "dscluster.checkpoint.save(...) and resumes with dscluster.checkpoint.load_latest(engine))")
        return None
    if got:
        return f"{console.WARN} " + tr("found no committed checkpoint to resume from, although step-{n} was committed "
                                       "when the attempt started", n=expected)
    return f"{console.WARN} " + tr(
        "did not resume from the committed step-{n}: the program has not called dscluster.checkpoint.load_latest"
        "(engine), so it started from scratch unless it resumes by itself", n=expected)


def _hf_resume_note(shown: ShownAttempt) -> str | None:
    """The resume line of a Hugging Face Trainer's attempt (None: not one, so the dscluster.checkpoint line)."""
    got, ready = shown.resumed, shown.attempt.resume_from
    if got and got.get("hf") and got.get("tag"):
        return f"{console.OK} " + tr("resumed from {tag} ({via})", tag=got["tag"], via=got.get("via") or "?")
    if got and got.get("hf") and not (ready and got.get("known") is False):  # known: it started from scratch
        if ready:
            return f"{console.WARN} " + tr("started from scratch, although {tag} was complete when the attempt "
                                           "started (resume with trainer.train(resume_from_checkpoint=True))",
                                           tag=ready)
        if int(shown.attempt.n or 1) <= 1:
            return None
        if got.get("known") is False:  # the program's checkpoint folders were not known: no claim either way
            return f"{console.WARN} " + tr("whether it resumed is not known: dscluster had not yet seen where the "
                                           "program saves its checkpoints")
        return f"{console.WARN} " + tr("started from scratch: no complete checkpoint was there to resume from")
    if ready and (not got or got.get("known") is False):
        return f"{console.WARN} " + tr("{tag} was complete when the attempt started; rank 0's log does not say "
                                       "whether it resumed from it", tag=ready)
    return None


def run_nodes(record: RunRecord) -> list[str]:
    """The nodes a run's ranks ran on, in rank order (as `logs` prefixes them)."""
    seen: list[str] = []
    for attempt in record.attempts:
        for node in attempt.rank_nodes:
            if node not in seen:
                seen.append(node)
    return seen or list(record.launch.host_names) or ["localhost"]


def check_log_filter(record: RunRecord, rank: int | None, node: str | None) -> None:
    """A --rank or --node that the run does not have is a mistake, not an empty log."""
    world = int(record.world_size or 0)
    if rank is not None and not 0 <= rank < world:
        raise UsageError(tr("run {id} has no rank {rank} (world size {n})", id=record.id, rank=rank, n=world),
                         tr("choose a rank from 0 to {last}", last=max(world - 1, 0)))
    nodes = run_nodes(record)
    if node is not None and node not in nodes:
        raise UsageError(tr("run {id} has no node {node!r}", id=record.id, node=node),
                         tr("choose one of: {names}", names=", ".join(nodes)))


def cmd_logs(args) -> int:
    from dscluster.runs.views.attach import follow

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    check_log_filter(record, args.rank, args.node)
    logs = run_dir / "logs"
    if not args.follow and not (logs.is_dir() and any(p.stat().st_size for p in logs.glob("*.log"))):
        print(tr("no logs yet in {path}", path=logs), file=sys.stderr)
        return ExitCode.OK
    try:
        record = follow(run_dir, sys.stdout, rank=args.rank, node=args.node, follow=args.follow)
    except KeyboardInterrupt:
        return ExitCode.OK  # leaving a log view never stops the run
    if args.follow:
        print_outcome(record)
        print(console.next_steps(f"dscluster status {record.id}", f"dscluster ckpt {record.id}"))
    return ExitCode.OK


def cmd_stop(args) -> int:
    from dscluster.runs.records.verify import record_to_act_on
    from dscluster.runs.supervising.control import stop_run

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    if record.status in store.FINISHED:
        print(tr("{warn} run {id} already finished ({status}); nothing to stop", warn=console.WARN, id=record.id,
                 status=record.status))
        print(console.next_steps(f"dscluster status {record.id}", f"dscluster logs {record.id}"))
        return ExitCode.OK
    check_may_control(record_to_act_on(run_dir).record, run_dir, "stop")  # its owner, or root; verified
    print(tr("stopping {id} on every node…", id=record.id), flush=True)
    record, forced = stop_run(run_dir, timeout=args.timeout)
    print(tr("{ok} run {id} stopped{how}", ok=console.OK, id=record.id,
             how=tr(" (forced)") if forced else ""))
    print(console.next_steps(f"dscluster status {record.id}", f"dscluster logs {record.id}"))
    return ExitCode.OK


def summary(run_dir) -> dict:
    """The run record's summary, as `dscluster status RUN --json` shows it (what `launch --json` prints)."""
    return {**status_view(store.read_record(run_dir), run_dir).to_json(), "run_dir": str(run_dir)}

"""`dscluster explain FILE... | - | RUN`: the failure explanation for logs of a run dscluster did not start,
or, for a run it supervised, the explanation its supervisor recorded (what `status` and the panel show).

A plain `deepspeed` or `torchrun` run, a batch job's output, a log pasted from a colleague: the same
explainer as `dscluster status` uses for supervised runs. It names the first failing rank's own error (with
its rank and node when the log's prefixes say them), the cause, the fix, and whether a restart can help.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dscluster import console
from dscluster import explain as explainer
from dscluster.console import FAIL, WARN
from dscluster.errors import ExitCode, UsageError
from dscluster.i18n import tr


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain", help=tr("explain a failed training run from its logs (any deepspeed, torchrun or batch scheduler output)"),
        description=tr("Read logs of a failed run (one per rank, or one with every rank's lines) and say which rank "
                       "failed first with its own error, the cause, the fix, and whether a restart can help."))
    parser.add_argument("files", nargs="+", metavar="FILE", help=tr("log files; - reads standard input; or a run id "
                                                                    "(the explanation status shows)"))
    parser.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec whose shared directory holds the runs"))
    parser.add_argument("--json", action="store_true", help=tr("print the explanation as JSON"))
    parser.set_defaults(func=cmd_explain)


def read_logs(files: list[str]) -> list[explainer.LogText]:
    logs = []
    for name in files:
        if name == "-":
            logs.append(explainer.LogText(sys.stdin.read(), name="-"))
            continue
        path = Path(name)
        if not path.is_file():
            raise UsageError(tr("no such log file: {path}", path=name), tr("give the path of a log file, or - for "
                                                                            "standard input"))
        text = explainer.read_tail(path, tail_bytes=2_000_000)
        if text is None:
            raise UsageError(tr("cannot read {path}", path=name), tr("check its permissions"))
        rank = explainer.rank_of_file(path.name)
        logs.append(explainer.LogText(text, rank=rank, time=path.stat().st_mtime if rank is not None else None,
                                      name=path.name))
    return logs


def _run_explanation(ref: str, cluster: str | None) -> tuple[str, str, dict | None]:
    """(run id, status, recorded explanation) of the run `ref` names."""
    from dscluster.commands.runview import find_run  # noqa: PLC0415
    from dscluster.runs.preparing.start import shown_status  # noqa: PLC0415
    from dscluster.runs.records import store

    run_dir = find_run(ref, cluster)
    record = store.read_record(run_dir)
    return record.id, shown_status(record), record.to_json().get("explanation")


def cmd_explain(args: argparse.Namespace) -> int:
    if len(args.files) == 1 and args.files[0] != "-" and not Path(args.files[0]).exists() \
            and "/" not in args.files[0]:
        # A run id: what its supervisor recorded, the same words as status and the panel.
        run_id, status, recorded = _run_explanation(args.files[0], args.cluster)
        if args.json:
            print(json.dumps(recorded, indent=2, ensure_ascii=False))
            return ExitCode.OK if recorded else ExitCode.FAILURE
        if not recorded:
            console.say(f"{WARN} " + tr("run {id} has no failure to explain ({status})", id=run_id, status=status))
            return ExitCode.FAILURE
        console.say(tr("run {id}: {status}", id=run_id, status=status))
        print_explanation(recorded)
        return ExitCode.OK
    exp = explainer.explain_logs(read_logs(args.files))
    if args.json:
        print(json.dumps(exp.to_dict() if exp else None, indent=2, ensure_ascii=False))
        return ExitCode.OK if exp else ExitCode.FAILURE
    if exp is None:
        console.say(f"{WARN} " + tr("no known failure in these logs: no traceback, crash or known error line"))
        return ExitCode.FAILURE
    print_explanation(exp.to_dict())
    return ExitCode.OK


def print_explanation(recorded: dict, indent: str = "") -> None:
    cause, fix = explainer.localized(recorded)
    line = explainer.error_line(recorded.get("error"))
    if line:
        console.say(f"{indent}{FAIL} {tr('first error')}: {line}")
    console.say(f"{indent}  {tr('cause')}: {cause}")
    evidence = recorded.get("evidence")
    if evidence and (not line or evidence not in line):
        console.say(f"{indent}  {tr('seen')}: {evidence}")
    console.say(f"{indent}  {tr('fix')}: {fix}")
    console.say(f"{indent}  {tr('restart can help')}: {tr('yes') if recorded.get('retry') else tr('no')}")

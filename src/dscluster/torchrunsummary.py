"""torchrun's summary of a failed launch, read as what it is: the launcher's report that rank R on host H exited with
code C, not the rank's own error (issue 45, session 27).

torch/distributed/elastic/multiprocessing/errors/__init__.py, ChildFailedError.format_msg and _FAILURE_FORMAT_TEMPLATE:
- torch 1.11 and later (to 2.9): a `Failures:` section (the other ranks, or `  <NO_OTHER_FAILURES>`), a `-----` line,
  `Root Cause (first observed failure):`, each failure as `[IDX]:` with `  time      : T`, `  host      : H`,
  `  rank      : R (local_rank: L)`, `  exitcode  : C (pid: P)`, `  error_file: PATH` (`<N/A>` where the rank wrote
  none) and `  traceback : MESSAGE`, then a `=====` line;
- torch 1.9-1.10: `Root Cause:` first, then `Other Failures:`, between `*****`/`=====` lines, no host, the fields as
  `  time: T`, `  rank: R (local_rank: L)`, `  exitcode: C (pid: P)`, `  error_file: PATH`, `  msg: "MESSAGE"`.
ProcessFailure's MESSAGE: the rank's traceback where its entry point is decorated with @record (ErrorHandler writes
it to error_file: the py_callstack, shown with every line indented two more spaces), else `Signal N (SIGNAME) received
by PID P` for a negative exit code (a signal: `signals` reads it as the rank's death, round 54), else `To enable traceback
see: https://pytorch.org/docs/stable/elastic/errors.html` (2.x; `Process failed with exitcode C` in 1.9-1.10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from dscluster import rankerror
from dscluster.logtext import Stream, line_time

_ROOT = re.compile(r"^Root Cause(?: \(first observed failure\))?\s*:\s*$")
_OTHERS = re.compile(r"^(?:Other )?Failures:\s*$")
_BORDER = re.compile(r"^(?:[=*-]{3,}|\s*<NO_OTHER_FAILURES>)\s*$")
_ENTRY = re.compile(r"^\[\d+\]:\s*$")
_FIELD = re.compile(r"^[ \t]{0,4}(?P<key>time|host|rank|exitcode|error_file|traceback|msg)\s*: ?(?P<value>.*)$")
_TRACEBACK = re.compile(r"^ {2}traceback\s*: Traceback \(most recent call last\):\s*$")


@dataclass(frozen=True)
class Failure:
    """One rank's failure as torchrun's summary lists it."""
    root: bool  # the first observed failure
    rank: int | None
    host: str | None
    code: int
    error_file: str | None  # None: `<N/A>`, the rank wrote none
    line: int  # the `exitcode` line's index in its stream
    time: float | None = None
    message: str | None = None  # its `traceback :` (`msg:` in 1.9-1.10) field's first line
    head: int = 0  # its section's header line (`Root Cause ...:`, `Failures:`) index in its stream


def failures(stream: Stream) -> list[Failure]:
    """Each failure of torchrun's summaries in a stream: the root cause and the others, in the order listed."""
    out: list[Failure] = []
    section, entry, head = None, None, 0
    for i, ln in enumerate(stream.lines):
        if _ROOT.match(ln) or _OTHERS.match(ln):
            section, entry, head = ("root" if _ROOT.match(ln) else "others"), None, i
            continue
        if _BORDER.match(ln):
            section = entry = None
            continue
        if section and _ENTRY.match(ln):
            entry = {}
            continue
        m = _FIELD.match(ln) if entry is not None else None
        if m is None:
            continue
        key, value = m.group("key"), m.group("value").strip()
        entry.setdefault(key, (value, i))
        if "exitcode" in entry and out and out[-1].line == entry["exitcode"][1]:  # listed after its exitcode
            if key == "error_file":
                out[-1] = replace(out[-1], error_file=_error_file(value))
            elif key in ("traceback", "msg"):
                out[-1] = replace(out[-1], message=value.strip('"'))
        code = re.match(r"(-?\d+) \(pid: \d+\)$", entry["exitcode"][0]) if key == "exitcode" else None
        if code:
            rank = re.match(r"(\d+) \(local_rank: \d+\)$", entry.get("rank", ("", 0))[0])
            out.append(Failure(section == "root", int(rank.group(1)) if rank else None,
                               entry.get("host", (None, 0))[0] or stream.node, int(code.group(1)),
                               _error_file(entry.get("error_file", ("", 0))[0]), i,
                               line_time(entry.get("time", ("", 0))[0]), head=head))
    return out


def _error_file(value: str) -> str | None:
    """The error file's path as the summary gives it; None for `<N/A>` (the rank wrote none) or nothing."""
    return value if value and value != "<N/A>" else None


def rank_errors(stream: Stream) -> list[rankerror.RankError]:
    """What torchrun's summaries in a stream say of the ranks themselves: a signal that ended the first observed
    failure, and the @record tracebacks (the summaries parsed once for both)."""
    found = failures(stream)
    return signals(stream, found) + own_errors(stream, found)


_SIGNAL = re.compile(r"\((SIG[A-Z]+)\)")


def signals(stream: Stream, found: list[Failure]) -> list[rankerror.RankError]:
    """The first observed failure where a signal ended it (a negative exit code): that rank's death by the signal its
    message names (`Signal 9 (SIGKILL) received by PID P`), on its host, at its time, as the stream's first error."""
    out = []
    for f in found:
        if not f.root or f.code >= 0:
            continue
        m = _SIGNAL.search(f.message or "")
        name = m.group(1) if m else rankerror.SIGNAL_NUMBERS.get(-f.code, f"signal {-f.code}")
        out.append(rankerror.RankError("signal", name, rankerror.SIGNAL_WORDS.get(name, name), rank=f.rank,
                                       node=f.host, time=f.time, symptom=name == "SIGTERM",
                                       note="\n".join(stream.lines[f.head + 1:f.head + 11]) + "\n",
                                       order=stream.order * 100000))
    return out


def own_errors(stream: Stream, found: list[Failure]) -> list[rankerror.RankError]:
    """The ranks' own errors that torchrun's summary shows: the traceback of a rank whose entry point is decorated with
    @record (its `traceback :` field, each line indented two spaces more), read as that rank's, on its host, at the
    failure's time; the root cause first where the times are the same (torch chose it by the error file's time)."""
    out = []
    lines = stream.lines
    for f in found:
        i = next((j for j in range(f.line + 1, min(len(lines), f.line + 3)) if _TRACEBACK.match(lines[j])), None)
        if i is None:
            continue
        sub = ["Traceback (most recent call last):"] + [x[2:] if x.startswith("  ") else x for x in lines[i + 1:i + 600]]
        exc, frames, k, chained = rankerror._read_traceback(sub, 0)
        while exc is None and chained:  # a chained exception: what was raised last is the error
            nxt = next((j for j in range(k, min(len(sub), k + 20)) if sub[j].startswith("Traceback (most recent")), None)
            if nxt is None:
                break
            exc, frames, k, chained = rankerror._read_traceback(sub, nxt)
        if exc is None:
            continue
        err = rankerror._rank_error(stream, "python", exc[0], exc[1], i + exc[2], rankerror.user_frame(frames), i,
                                    f.time, rankerror.library_frame(frames))
        out.append(replace(err, rank=f.rank, node=f.host, order=err.order - (100000 // 2 if f.root else 0)))
    return out


# The launcher's own exceptions around torchrun's summary: what it raised because a rank failed, never a rank's error.
_LAUNCHERS = frozenset({"ChildFailedError", "CalledProcessError"})


def report(streams: list[Stream], errs: list[rankerror.RankError]):
    """With no rank's own error in the text (only the launcher's exceptions), torchrun's summary of a rank that exited
    with a positive code: an answer that names no cause, says which rank on which host exited with which code, that the
    summary does not show the rank's error, and where to find it. A negative code is a signal (launcher_exits)."""
    from dscluster.explain import Explanation  # noqa: PLC0415 - explain.py asks here; its class is the answer

    if any(e.kind != "python" or e.type.rsplit(".", 1)[-1] not in _LAUNCHERS for e in errs):
        return None
    found = [(st, f) for st in streams for f in failures(st)]
    stream, root = next(((st, f) for st, f in found if f.root), (None, None))
    if root is None or root.code <= 0:
        return None
    others = sorted({f.rank for _, f in found if not f.root and f.rank is not None and f.rank != root.rank})
    who = f"rank {root.rank}" if root.rank is not None else "a rank"
    cause = ("torchrun's summary reports that {who} on {host} exited with code {code}" if root.host else
             "torchrun's summary reports that {who} exited with code {code}")
    cause += " (the first observed failure; other failed ranks: {others})" if others else ""
    cause += (": that is the launcher's report of the exit, not the rank's error, which the summary does not show. "
              "A positive exit code is the script's own exit (an uncaught exception, sys.exit): the same code and "
              "input fail the same way again.")
    fix = ("Read the error file torchrun names ({error_file}, on that host: @record wrote the rank's error there) and "
           "that rank's own output above torchrun's summary; fix what they name. A restart meets the same error."
           if root.error_file else
           "Read that rank's own output above torchrun's summary (its traceback or last lines) and fix what it names. "
           "If it is not there: decorate the script's entry point with @record (from "
           "torch.distributed.elastic.multiprocessing.errors import record), which writes the error to error_file and "
           "shows it in the summary, or keep each rank's output in files with torchrun's --log-dir DIR --redirects 3 "
           "(--tee 3 to see it too). A restart meets the same error.")
    params = {"who": who, "host": root.host or "", "code": str(root.code), "others": ", ".join(map(str, others)),
              "error_file": root.error_file or ""}
    error = {"kind": "exit", "type": f"exited with code {root.code} (torchrun's summary)", "rank": root.rank,
             "node": root.host, "symptom": True, "summary": f"exited with code {root.code} (torchrun's summary)",
             "who": f"{who} on {root.host}" if root.host else who}
    error = {k: v for k, v in error.items() if v is not None}
    return Explanation("torchrun-exit", cause, fix, False, stream.lines[root.line].strip()[:300], params, error)

"""Failure explanations: a run's logs -> what went wrong and how to fix it (the signature table is
signatures.py; how log text is read, bounded and linear whatever it holds, is logtext.py).

Precedence, first that applies wins (a specific cause beats a generic one; tests/unit/test_explain_precedence.py):
  1. A rank's own error (a Python exception, a C++ what(), argparse's usage error), the first by time:
     a. the first non-symptom signature in its own block (traceback and message; READS_BEFORE: and the lines before);
     b. for a vague error (RuntimeError, NCCL's "unhandled system error", a failed build) a signature in the
        lines just before it (BEFORE_THE_ERROR), then a fact about a node's environment on any rank (ENVIRONMENT);
     c. else an OS error text in it (errorline.py: a missing file, a permission), else its own words ("rank N
        raised X at F:L"), never a generic table answer.
  2. No rank's own error (a kill, a hang, a node lost): the table over every stream, earliest stream first,
     root causes before symptoms; a killed rank's signal before what its peers saw of its death.
  3. Nothing in 1 or 2, last resort (errorline.py, generic): an OS error text on any line, else the log's first
     error line (error-line: never a warning, a benign "error" word or a consequence such as an exit code).
  Within the table: dscluster's own `error:`/`fix:` lines only in their exact form (signatures._PROGRAM_ERROR),
  a script's `PROG.py: error:` is argparse's; symptoms (`symptom=True`) and "a rank raised" come last.
The supervisor stores the result in run.json; `dscluster status` shows it. `retry` says whether restarting
can help: a missing module fails the same way every time."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dscluster import earlyexit, errorline, launchcmd, logtext, mixedversions, rankerror, refusals, torchrunsummary
from dscluster.collectives import collective_params
from dscluster.i18n import gettext, tr
from dscluster.sigmessages import CUTS_THE_COMMAND, READS_BEFORE
from dscluster.signatures import BEFORE_THE_ERROR, ENVIRONMENT, SIGNAL_WHY, SIGNATURES, VAGUE_TYPES, Signature
from dscluster.sigrdzv import READS_AS_LOGGED


@dataclass(frozen=True)
class Explanation:
    signature: str
    cause: str
    fix: str
    retry: bool  # whether a restart can help
    evidence: str
    params: dict = field(default_factory=dict)  # values for {placeholders} in cause and fix
    error: dict | None = None  # the first failing rank's own error (rankerror.RankError.to_dict())

    @property
    def restart_can_help(self) -> bool:
        return self.retry

    @property
    def error_line(self) -> str | None:
        """`rank 0 on node1: TypeError: ... (train.py:22)`: the failing rank's own words, on one line, in English
        (as records keep it; views show it with `error_line`)."""
        return error_line(self.error, english=True)

    def to_dict(self) -> dict:
        """For run.json: English with the values filled in, like every record. An explanation built from
        a template also keeps the templates and values, so readers show it in their language (`localized`)."""
        d = asdict(self)
        params, error = d.pop("params"), d.pop("error")
        if params:
            d.update(cause=self.cause.format(**params), fix=self.fix.format(**params),
                     templates={"cause": self.cause, "fix": self.fix}, params=params)
        d["restart_can_help"] = self.retry
        if error:
            d["error"] = error
        return d


def no_restart_note(exp: dict) -> str | None:
    """Why the supervisor did not restart after this failure, though restarts were left."""
    why = (exp.get("no_restart") or {}).get("why")
    if why == "cannot-help":
        return tr("not restarted: a restart cannot help with this failure (the same command fails the same way)")
    if why == "same-failure":
        return tr("not restarted: this attempt failed the same way as attempt {n}, with no progress in between "
                  "(no newer checkpoint, no higher step)", n=exp["no_restart"].get("previous", "?"))
    return None


def error_line(error: dict | None, english: bool = False) -> str | None:
    """A recorded error on one line, its rank and node named in the reader's language (or in English)."""
    if not error or not error.get("summary"):
        return None
    rank, node = error.get("rank"), error.get("node")
    if english:
        who = error.get("who")
    elif isinstance(rank, int) and node:
        who = tr("rank {rank} on {node}", rank=rank, node=node)
    elif isinstance(rank, int):
        who = tr("rank {rank}", rank=rank)
    else:
        who = node or error.get("who")
    return f"{who}: {error['summary']}" if who else error["summary"]


def localized(recorded: dict) -> tuple[str, str]:
    """(cause, fix) of a recorded explanation in the reader's language."""
    templates = recorded.get("templates") or {}
    params = {k: str(v) for k, v in (recorded.get("params") or {}).items()}
    if templates and params:
        return tr(templates.get("cause") or "", **params), tr(templates.get("fix") or "", **params)
    # Text recorded filled in (no templates) is looked up as it is, never formatted again.
    return gettext(recorded.get("cause") or ""), gettext(recorded.get("fix") or "")


@dataclass(frozen=True)
class LogText:
    """One log to explain: a rank's own file (rank/node known), a launcher's output, or a pasted log."""
    text: str
    node: str | None = None
    rank: int | None = None
    time: float | None = None  # when it was last written (a file's mtime): orders errors without time stamps
    name: str = ""


def explain(text: str) -> Explanation | None:
    """The explanation of one log text (which may hold many ranks' lines, with prefixes)."""
    return explain_logs([LogText(text)])


def _line_at(text: str, match: re.Match) -> str:
    """The line(s) the match covers; a pattern that must read more than the line it names (what stands before it:
    sigwords.TORCH_JIT_WAIT, sigdeepspeed's ds-zero-requires-optimizer) names that line by a group `ev`."""
    first, last = match.span("ev") if "ev" in match.re.groupindex and match.group("ev") is not None else match.span()
    start = text.rfind("\n", 0, first) + 1
    end = text.find("\n", last)
    return text[start:end if end >= 0 else len(text)].strip()[:300]


# Rank 0's store out of reach (the core table's master-unreachable, the last of that name: sigmessages.with_store):
# the words of a peer whose connection to the store is refused or times out. Where a rank was killed or crashed first
# and no rank has an error of its own, they are what the others saw of the store's process gone, not a wrong address.
_STORE_OUT_OF_REACH = [s for s in SIGNATURES if s.name == "master-unreachable"][-1]
_STORE_WAIT = next(s for s in SIGNATURES if s.name == "store-ranks-missing")  # a killed rank is the one it waited for
# What a process may print as it dies of an error already shown, with the signal that then ends it.
AT_EXIT = {"exit-abort": "SIGABRT", "aborted": "SIGABRT", "segfault": "SIGSEGV"}
_VAGUE_MESSAGE = re.compile(r"NCCL|gloo|unhandled system error|invalid usage|internal error", re.IGNORECASE)


def _vague(err: rankerror.RankError) -> bool:
    """An error that says something failed without saying why (a communication library's error, a failed
    build): the lines before it, or the environment, may say why."""
    short = err.type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    # NCCL's result names (ncclSystemError, ncclInternalError...) say only which kind of call failed.
    return short in VAGUE_TYPES or short.endswith("RuntimeError") or short.startswith("nccl") or err.kind != "python" or \
        bool(_VAGUE_MESSAGE.search(err.message)) or (short == "AssertionError" and not err.message.strip())


def _as_logged(err: rankerror.RankError) -> str:
    """The error's block as the log has its lines: with the prefix the stream cut (torch's `[rankN]: `)."""
    stream, start, end = err.source or (None, 0, 0)
    return "\n".join(stream.raw[p] for p in stream.positions[start:end + 6]) if stream and stream.positions else err.block


def _own_signature(err: rankerror.RankError,
                   streams: list[rankerror.Stream]) -> tuple[Signature, re.Match, str] | None:
    """The first non-symptom signature in the rank's own error. For a vague error (RuntimeError: Error
    building extension, DistBackendError: unhandled system error) a more specific one may stand in the
    lines just before it (the compiler's error, NCCL's WARN line), or, for facts about the environment
    (a loopback address, a firewall, /dev/shm), in any rank's lines."""
    order = {s.name: i for i, s in enumerate(SIGNATURES)}
    # An abort or crash printed after a Python traceback is the process dying of that error with its
    # communication threads still running (PyTorch's race at exit), not another cause.
    before_exit = err.block[:len(err.block) - len(err.after)] if err.kind == "python" else err.block
    best = None
    for sig in SIGNATURES:
        text = f"{err.context}\n{err.block}" if sig in READS_BEFORE else before_exit if sig.name in AT_EXIT else err.block
        text = _as_logged(err) if sig.name in READS_AS_LOGGED else text
        m = None if sig.symptom else sig.pattern.search(text)
        if m and not sig.set_aside(m, (st.text for st in streams)):
            best = (sig, m, text)
            break
    if not _vague(err):
        return best
    limit = order[best[0].name] if best else len(SIGNATURES)
    for sig in SIGNATURES[:limit]:
        if sig.name in BEFORE_THE_ERROR:
            m = sig.pattern.search(err.context)
            if m:
                return sig, m, err.context
    if best:
        return best
    for sig in SIGNATURES:
        if sig.name in ENVIRONMENT:
            for st in streams:
                m = sig.pattern.search(st.text)
                if m:
                    return sig, m, st.text
    return None


def _from_signature(sig: Signature, m: re.Match, text: str, err: rankerror.RankError | None,
                    streams: list[rankerror.Stream]) -> Explanation:
    if sig.name == "program-error":
        # The program's own words are the explanation: the message and its fix line.
        msg, fix = (m.group("msg") or m.group("hmsg")).strip(), (m.group("fix") or m.group("hfix") or "").strip()
        return Explanation(sig.name, msg[:300], fix[:300] or sig.fix, False, m.group(0).strip()[:300],
                           error=err.to_dict() if err else None)
    params = collective_params(streams) if sig.name == "collective-timeout" else {}
    return Explanation(sig.name, sig.cause, sig.fix, sig.retry, _line_at(text, m), params,
                       err.to_dict() if err else None)


def _pipe_closed(err: rankerror.RankError | None) -> bool:
    """Python's own BrokenPipeError with no collective library's words about it (those are gloo-peer-closed's, earlier
    in the table): a pipe whose reader closed (a script's output piped into `head`, a logging stream, a multiprocessing
    queue of a DataLoader worker or a pool). Its own words answer, with no restart (review 42 of issue 45)."""
    return err is not None and err.kind == "python" and err.type.rsplit(".", 1)[-1] == "BrokenPipeError"


def _who(err: rankerror.RankError) -> str:
    if err.rank is not None:
        return f"rank {err.rank} ({err.node})" if err.node else f"rank {err.rank}"
    return err.node or "a rank"


def own_error(err: rankerror.RankError) -> Explanation:
    """A rank's own error that no signature knows: its words are the explanation."""
    short = err.type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    who = _who(err)
    evidence = err.summary[:300]
    if err.kind == "signal":
        return Explanation("rank-crash", "{who} was killed by {sig} with no error of its own: {why}.",
                           "Read the end of that rank's log and the node's kernel log (dmesg -T); an OOM kill names "
                           "the process and its memory.", err.type != "SIGKILL", evidence,
                           {"who": who, "sig": err.type, "why": SIGNAL_WHY.get(err.type, "a signal from outside")},
                           err.to_dict())
    if err.kind == "nccl":
        return Explanation("nccl-error", "{who} reported an NCCL error; the collective failed there first.",
                           "Read NCCL's WARN lines of that rank (run with NCCL_DEBUG=INFO for more); run an all-reduce "
                           "test across the nodes (`dscluster doctor --collective`).", True, evidence,
                           {"who": who}, err.to_dict())
    if err.kind == "native":
        return Explanation("native-error", "{who} stopped on an uncaught C++ exception ({type}); the other ranks "
                           "stopped because of it.", "Read its what() line above; it names the operation that failed.",
                           True, evidence, {"who": who, "type": err.type}, err.to_dict())
    deterministic = short in refusals.DETERMINISTIC_TYPES
    transient = not deterministic and (short in refusals.TRANSIENT_TYPES or errorline.transient(err.message))
    lib = rankerror.library_of(err.origin) if err.origin else None
    if not transient and (refusal := refusals.explain(err, who, lib)) is not None:
        return refusal
    params = {"who": who, "type": short, "where": err.where or "", "lib": lib or "", "origin": err.origin or ""}
    if lib and err.where and not rankerror.is_library(err.file):
        cause = "{who} raised {type} inside {lib} ({origin}), called from {where}; the other ranks stopped because of it."
    elif lib:
        cause = "{who} raised {type} inside {lib} ({origin}); the other ranks stopped because of it."
    elif err.where:
        cause = "{who} raised {type} at {where}; the other ranks stopped because of it."
    else:
        cause = "{who} raised {type}; the other ranks stopped because of it."
    if transient:
        fix = ("A restart may help: the error is of a kind that passes (a timeout, a refused or dropped connection); "
               "if it comes back, fix what it names.")
    elif deterministic or not lib:
        fix = ("Fix what the error names, then launch again: the same code and input raise it again, so a restart "
               "cannot help.")
    else:
        fix = ("Its message says what {lib} could not do with what it was given: fix that (the script, its arguments, "
               "the config, the installed versions), then launch again; a restart meets the same error.")
    return Explanation("python-error", cause, fix, transient, evidence, params, err.to_dict())


# What the launcher's printed command line may explain better: a rank's own words, a usage error that its
# arguments caused, the last resort's answers (launchcmd.py).
_COMMAND_LINE_EXPLAINS = errorline.GENERIC | refusals.NAMES | {"python-error", "torchrun-exit", "argparse-usage", "program-error", "script-not-found",
    "ds-config-invalid", "local-rank-arg", "input-error-exit", "workdir-missing"}


def _command_cut(streams: list[rankerror.Stream], first: rankerror.RankError | None) -> Explanation | None:
    """A launch line the shell cut short (sigmessages.CUTS_THE_COMMAND): the cause of whatever failed after it."""
    for sig in (s for s in SIGNATURES if s.name in CUTS_THE_COMMAND):
        for st in streams:
            if m := sig.pattern.search(st.text):
                return _from_signature(sig, m, st.text, first, streams)
    return None


def explain_logs(logs: Sequence[LogText], hint_rank: int | None = None) -> Explanation | None:
    """Explain several logs of one failure together (_explain_streams), unless the command line a launcher printed
    shows the cause of the rank's error (a \\r from a CRLF script, --local_rank before the script's own argument,
    a config that is not JSON), or the ranks left saw a peer go away that had exited 0 before (earlyexit.py)."""
    exp = _explain_streams(logs, hint_rank)
    if exp is not None and exp.signature in earlyexit.SYMPTOMS:
        found = earlyexit.read(log.text for log in logs)
    elif exp is not None and exp.signature not in _COMMAND_LINE_EXPLAINS:
        return exp
    else:
        said = f"{(exp.error or {}).get('summary', '')}\n{exp.evidence}" if exp is not None else ""
        found = next((f for log in logs if (f := launchcmd.read(log.text, said)) is not None), None)
    return exp if found is None else Explanation(found.signature, found.cause, found.fix, False, found.evidence,
                                                 found.params, exp.error if exp is not None else None)


def _explain_streams(logs: Sequence[LogText], hint_rank: int | None = None) -> Explanation | None:
    """Explain several logs of one failure together. The first failing rank's own error (a Python
    exception, a C++ exception's what(), a usage error) is the answer when a rank has one: a signature
    that knows it names the cause and fix, else its own words do. Only when no rank has an error of its
    own (a kill, a hang, a node lost) does the table speak over every line, roots before symptoms."""
    streams: list[rankerror.Stream] = []
    for i, log in enumerate(logs):
        streams += rankerror.streams(log.text, log.node, log.rank, log.time, order=i)
    errs = [e for st in streams for e in rankerror.errors(st)]
    errs += [e for st in streams for e in (*rankerror.launcher_exits(st), *torchrunsummary.rank_errors(st))]
    first = rankerror.first_failure(errs, hint_rank)
    if (cut := _command_cut(streams, first)) is not None:
        return cut
    if len(versions := mixedversions.nccl_versions(texts := tuple(st.text for st in streams))) > 1 and \
            (first is None or first.symptom or _vague(first)):
        return Explanation("version-mismatch", mixedversions.CAUSE, mixedversions.FIX, False,
                           " / ".join(f"NCCL version {v}" for v in versions), {"versions": ", ".join(versions)},
                           first.to_dict() if first else None)
    if first is not None and not first.symptom and first.kind in ("python", "native", "usage"):
        own = _own_signature(first, streams)
        if own:
            return _from_signature(own[0], own[1], own[2], first, streams)
        return errorline.last_resort(streams, first, own=True) or own_error(first)
    # No rank's own words: the table over every stream, earliest first.
    when = {}
    for e in errs:
        key = (e.node, e.rank)
        t = e.time if e.time is not None else float("inf")
        when[key] = min(when.get(key, t), t)
    ordered = sorted(streams, key=lambda st: (when.get((st.node, st.rank), st.time if st.time is not None
                                                       else float("inf")), st.order))
    signal_first = first is not None and first.kind == "signal" and not first.symptom
    for sig in SIGNATURES:
        if (sig is _STORE_OUT_OF_REACH or sig is _STORE_WAIT) and signal_first:
            continue  # the store's process was killed: its peers' reconnects are refused or time out (session 25)
        if sig.symptom and signal_first:
            # Roots first (an OOM kill's own line); then the signal that ended the first rank, before what
            # the other ranks saw of its death (a peer that closed the connection, a collective timeout).
            signal_first = False
            for s2 in SIGNATURES:
                m = s2.pattern.search(first.context) if s2.symptom else None
                if m:
                    return _from_signature(s2, m, first.context, first, streams)
        if sig.name in AT_EXIT and first is not None and first.kind == "signal" and first.type != AT_EXIT[sig.name]:
            continue  # another rank's abort or crash does not explain the first one's kill
        for st in ordered:
            m = sig.pattern.search(st.text)
            if m and not sig.set_aside(m, texts, first is not None):  # one tuple: found_in_any caches on it
                if sig.name == "python-error" and _pipe_closed(first):
                    return own_error(first)
                if sig.name == "python-error" and (summary := torchrunsummary.report(streams, errs)):
                    return summary  # torchrun's own traceback over its summary: the launcher's report, no rank's error
                err = first
                if err is None or (err.node, err.rank) != (st.node, st.rank):
                    err = next((e for e in errs if (e.node, e.rank) == (st.node, st.rank)), first)
                return _from_signature(sig, m, st.text, err, streams)
    if summary := torchrunsummary.report(streams, errs):
        return summary
    return own_error(first) if first is not None else errorline.last_resort(ordered)


read_tail, rank_of_file = logtext.read_tail, logtext.rank_of_file  # where callers have always found them


def explain_files(paths: Iterable[Path], tail_bytes: int = 64_000,
                  upto: dict[Path, int] | None = None, since: dict[Path, int] | None = None,
                  nodes: dict[int, str] | None = None, hint_rank: int | None = None) -> Explanation | None:
    """Explain the tails of several log files together (explain_logs). A file named like DeepSpeed's
    `*_rank{N}.log` is rank N's own (on `nodes[N]` when given); its mtime orders it against the others.
    `upto` caps a file at a byte offset, e.g. where it stood when the failure was detected, so the
    teardown's own noise (SIGTERM/SIGKILL messages) is never taken for the cause; `since` starts a file at
    one, e.g. where it stood when this attempt began, so an earlier attempt's ending is never taken for
    this one's."""
    logs = []
    for path in paths:
        text = read_tail(path, tail_bytes, (upto or {}).get(path), (since or {}).get(path, 0))
        if text is None:
            continue
        rank = rank_of_file(path.name)
        try:
            mtime = path.stat().st_mtime if rank is not None else None
        except OSError:
            mtime = None
        logs.append(LogText(text, (nodes or {}).get(rank) if rank is not None else None, rank, mtime, path.name))
    return explain_logs(logs, hint_rank) if logs else None


# symptoms, what failed but not why (the kind of refusal a message states is still not which cause)
GENERIC = frozenset(s.name for s in SIGNATURES if s.symptom) | errorline.GENERIC | refusals.NAMES | {"torchrun-exit"}
# What the surviving ranks may print when a node vanishes or a rank is killed: on their own (no rank's own
# error behind them) they do not outweigh what the supervisor saw happen.
NETWORK = frozenset({"firewall-blocked", "master-unreachable", "loopback-address", "nccl-ib", "nccl-no-interface",
                     "nccl-wrong-interface", "ssh-unreachable", "address-in-use", "nccl-error", "native-error",
                     "rank-crash"})


def rooted(exp: Explanation | None) -> bool:
    """Whether an explanation rests on a rank's own error (a Python exception, a C++ exception's what(), a
    usage error), not only on lines any rank may print."""
    err = (exp.error or {}) if exp is not None else {}
    return bool(err) and not err.get("symptom") and err.get("kind") in ("python", "native", "usage")


def custom(signature: str, cause: str, fix: str, evidence: str = "", retry: bool = True, **params) -> Explanation:
    """An explanation the supervisor derives itself (node lost, stall), not from log text. `cause` and `fix`
    are catalog templates; `params` fill their {placeholders} when shown (so they translate)."""
    return Explanation(signature, cause, fix, retry, evidence, dict(params))

"""The explainer's last word, and the operating system's own error texts read wherever they appear.

explain.py asks here only when nothing more specific answers (tests/unit/test_explain_precedence.py):
- `os_error(text)`: the C library's error texts (strerror), as Python's `[Errno N] TEXT: 'PATH'`, an
  OSError/FileNotFoundError/PermissionError line, or a C program's `PROG: PATH: TEXT`, in the languages glibc
  translates them to (its po files: zh_TW, zh_CN, ja, de, fr, es): a missing file (named for what it is only where
  its name says so for certain: DeepSpeed's checkpoint states or its `latest` file, a config file, a hostfile), a
  permission, a read-only file system, memory the system refused. What failed, never why: each is generic.
- `error_line(streams)`: the line that most looks like the failure, where a log names none that dscluster knows:
  the first line in a form tools and libraries use for errors (`error:`, `ERROR`, `FATAL`, `[Errno N]`, `failed`,
  `cannot`, a shell's `command not found`, the loader's, in the same languages), never a warning, a line that only
  holds the word (`error_handler`, `0 errors`, `--on-error`), dscluster's own `error:`/`fix:` lines or what follows
  an error (a launcher's `exits with return code`, pdsh's `ssh exited with exit code`). A restart can help only
  when the line is of a kind that passes (a timeout, a refused connection); "no" else, its fix naming what a restart
  meets again where the line says (a missing file or command, a permission, an option not accepted).
Every pattern is linear in the line (tests/unit/test_explain_linear.py); a quoted line is shown escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dscluster.logtext import Stream, printable
from dscluster.rankerror import NCCL_NOTICE
from dscluster.sigmessages import NOT_FOUND
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig
from dscluster.strerror import EACCES, ENOENT, ENOMEM, EROFS, LOADER


def _path_before(text: str) -> str:
    """`[Errno N] TEXT: 'PATH'` (Python), or a C program's `PROG: PATH: TEXT` and coreutils' `cannot open 'PATH' for
    reading: TEXT` (the quoted name before the text, else the word right before it, unless that word is an exception's
    class, `OSError: No such file or directory`, the tokenizers library's `Exception: ... (os error 2)`): the path."""
    return (r"\[Errno \d+\] (?:" + text + r")[:：] ?['‘\"](?P<py>[^'’\"\n]{1,400})|"
            r"(?:['‘\"](?P<q>[^'‘’\"\n]{1,400})['’\"][^'‘’\"\n:：]{0,200}|(?:^|(?<=[\s(]))"
            r"(?![\w.]*(?:Error|Exception|Warning)[:：])(?P<c>[^\s:：'‘’\"()]{1,400}))"
            r"[:：] ?(?:" + text + ")")


OS_SIGNATURES: tuple[Signature, ...] = (
    _sig("file-missing", _path_before(ENOENT) + r"|\[Errno 2\]|(?:" + ENOENT + ")",
         "A file the program needs is missing: {path}.",
         "Create it or correct the path that names it (relative paths start in the rank's working directory), on "
         "every node that reads it; a restart meets the same missing file.", retry=False),
    _sig("permission-denied", _path_before(EACCES) + r"|\[Errno 13\]|(?:" + EACCES + ")",
         "The program was refused access to a file or directory (permission denied): {path}.",
         "Give the user that runs the ranks access to it on every node (ls -l; a directory made by root or by another "
         "user), or use a path of its own; a restart is refused the same way.", retry=False),
    _sig("read-only-fs", _path_before(EROFS) + r"|\[Errno 30\]|(?:" + EROFS + ")",
         "The program wrote to a file system mounted read-only: {path}.",
         "Write to a writable path (a container volume mounted read-write, not :ro), or remount it; a disk the "
         "kernel remounted read-only after errors needs checking (dmesg).", retry=False),
    _sig("host-memory", r"\[Errno 12\]|" + _path_before(ENOMEM) + "|(?:" + ENOMEM + ")",
         "The operating system refused the program memory (Cannot allocate memory): the node's RAM was used up, or a "
         "limit of the process or its container (ulimit -v, the container's memory) was reached, often at a "
         "DataLoader worker's fork().",
         "Use less host memory (fewer DataLoader workers, no CPU offload) or give the job more (the batch job's --mem, "
         "the container's --memory); check free -g and dmesg on the node.", retry=False),
)
GENERIC = frozenset({s.name for s in OS_SIGNATURES} | {"error-line"})  # what failed, never why
_OS_ANY = re.compile(r"\[Errno \d+\]|" + "|".join((ENOENT, EACCES, EROFS, ENOMEM)), re.IGNORECASE)
# What a missing file is, where its name says so for certain.
_WHAT_FILE = (
    (re.compile(r"(?:^|/)(?:\w*_(?:optim|model)_states\.pt|latest)$"),
     "The checkpoint directory lacks DeepSpeed's states: {path} is missing.",
     "Resume from a checkpoint saved in full by DeepSpeed (global_stepN/ with its *_states.pt files and `latest`), "
     "on a path every node sees, or start from its weights without resuming; a restart meets the same directory."),
    (re.compile(r"(?:^|/)(?=[^/]*(?:ds_?config|deepspeed))[^/]*\.json$|(?:^|/)(?=[^/]*config)[^/]*\.(?:json|ya?ml)$", re.I),
     "A config file the run reads is missing: {path}.",
     "Write it, or pass the path where it is (relative paths start in the rank's working directory), on every node; "
     "a restart meets the same missing file."),
    (re.compile(r"(?:^|/)[^/]*hostfile[^/]*$", re.I),
     "The hostfile is missing: {path}.",
     "Write the hostfile (one `HOST slots=N` line per node) and pass its path (--hostfile); a restart meets the same "
     "missing file."),
)


def os_error(lines: Sequence[str]) -> tuple[Signature, re.Match, str, str, str] | None:
    """The first OS error text on a line that is no warning: (signature, match, cause, fix, the line), the cause
    saying what a missing file is where its name says so for certain."""
    for line in lines:
        if not _OS_ANY.search(line) or _NOT_AN_ERROR.search(line) or _CONSEQUENCE.search(line):
            continue
        found = min(((s, m) for s in OS_SIGNATURES if (m := s.pattern.search(line))), key=lambda f: f[1].start(),
                    default=None)
        if found is None:
            continue
        sig, m = found
        path = _path_of(m)
        cause, fix = sig.cause, sig.fix
        if sig.name == "file-missing" and path:
            cause, fix = next(((c, f) for p, c, f in _WHAT_FILE if p.search(path)), (cause, fix))
        return sig, m, cause, fix, line
    return None


def _nccl_system_call(block: str) -> tuple[Signature, re.Match] | None:
    """NCCL's failed system call raised as the rank's own error (torch's `NCCL error in: ..., unhandled system error`)
    with no NCCL WARN line to say which: nccl-system-call, a symptom among other ranks' errors, says more here than
    the words alone (rerun with NCCL_DEBUG=WARN; shared memory in a container, NCCL_SOCKET_IFNAME for a socket)."""
    from dscluster.signatures import SIGNATURES  # noqa: PLC0415 - the table imports this module's words

    sig = next(s for s in SIGNATURES if s.name == "nccl-system-call")
    m = sig.pattern.search(block)
    return (sig, m) if m else None


def _path_of(m: re.Match) -> str:
    groups = m.re.groupindex
    return next((m.group(g) for g in ("py", "q", "c") if g in groups and m.group(g)), "")


def _shown(text: str) -> str:
    """Log text as a cause or evidence quotes it: one line, escaped for a terminal, bounded."""
    return printable(text.strip(), one_line=True)[:300]


def last_resort(streams: Sequence[Stream], err=None, own: bool = False):
    """explain.py's last word (its docstring has the order): the first OS error text (in a rank's own error's
    block, `own`, or over the streams, earliest first), else, with no rank's own error, the first error line."""
    from dscluster.explain import Explanation, _line_at  # noqa: PLC0415 - explain.py asks here; its class is the answer

    error = err.to_dict() if err is not None else None
    blocks = [err.block.split("\n")] if own else [st.lines for st in streams]
    for lines in blocks:
        if (found := os_error(lines)) is not None:
            sig, m, cause, fix, line = found
            params = {"path": _shown(_path_of(m)) or "?"} if "{path}" in cause else {}
            return Explanation(sig.name, cause, fix, sig.retry, _shown(line), params, error)
    if own and (found := _nccl_system_call(err.block)) is not None:
        sig, m = found
        return Explanation(sig.name, sig.cause, sig.fix, sig.retry, _shown(_line_at(err.block, m)), {}, error)
    line = None if own else first_error_line(streams)
    if line is None:
        return None
    retry, fix = restart(line)
    return Explanation(ERROR_LINE.name, ERROR_LINE.cause, fix, retry, _shown(line), {"line": _shown(line)}, error)


# ---- the error line ---------------------------------------------------------------------------------
_ERROR = re.compile(
    r"\b(?:errors?|fatal|failed|failure|cannot|can't|could ?n[o']t|unable to|panic|abort(?:ed|ing)?)\b|"
    r"\[Errno -?\d+\]|\berrno\b|(?-i:\b[A-Z]\w*(?:Error|Exception)\b)|"
    r"錯誤|错误|出错|エラー|失敗|失败|\bFehler|fehlgeschlagen|\berreur|échec|" + ENOENT + "|" + EACCES + "|" + EROFS
    + "|" + LOADER + "|(?:\\S" + NOT_FOUND + ")", re.IGNORECASE)
# Lines that are never the failure: warnings and notes, log levels below error, a traceback's frames,
# dscluster's own `error:`/`fix:` lines (signatures._PROGRAM_ERROR reads those) and its supervisor's `[dscluster HH:MM:SS]`
# lines in launcher.log (what it saw and did: `failure detected: ...` is its report of the failure, not the failure).
_NOT_AN_ERROR = re.compile(
    r"warn(?:ing)?s?\b(?<!NCCL WARN)|deprecat|^\s*(?:note|hint|info|debug)\s*[:：]|"
    r"(?-i:\b(?:INFO|DEBUG|NOTICE|WARNING|WARN)\b(?<!NCCL WARN))|^\s*\[?[IWD]\d{4} |^\s*\[[IWD] |^\s*File \"|"
    r"(?-i:^(?:\[rank \d+\] )?(?:error|錯誤): |^(?:\[rank \d+\] )?\s+(?:fix|解法): |^\[dscluster \d\d:\d\d:\d\d\] )",
    re.IGNORECASE)
# What follows an error: a launcher's or a build's report that a process exited (its exit code at the line's end: a
# cause's own line may name one in its middle, Docker's `error running hook: exit status 1, stderr: ...`), a teardown.
_CONSEQUENCE = re.compile(
    r"exits with return code|(?:exit(?:ed|s)?|failed|finished) with (?:exit |return )?(?:code|status)\s*[=:]?\s*"
    r"-?\d+\W{0,3}$|"
    r"returned non-zero exit status|non-zero exit (?:status|code)|Killing subprocess|sigkill_handler|failed \(exitcode|"
    r"ChildFailedError|subprocess-exited-with-error|build stopped|did not run successfully|Failed (?:building wheel|"
    r"to build)|\*\*\* \[[^\]\n]{0,300}\] Error \d+|task \d+: Exited|error: command '[^'\n]{0,300}' failed|"
    r"CANCELLED AT|\bTerminated\b", re.IGNORECASE)
# Words that hold "error" without being one: options, counts of none, handlers.
_BENIGN = re.compile(
    r"(?<![\w-])--?[A-Za-z][\w-]*+|\b(?:0|no|zero|without)\s+(?:errors?|failures?|failed)\b|"
    r"\b(?:errors?|failures?|failed)\s*[=:]\s*0\b|\berrors?[ _](?:handl\w*|rate|count|bars?|correction|checking)\b|"
    r"\bignore[_ ]errors?\b|\berrors\s*=\s*['\"]?\w+", re.IGNORECASE)
# A line of a kind that passes: a timeout, a refused or reset connection, a service that is busy.
_TRANSIENT = re.compile(
    r"timed? ?out|timeout|Connection (?:refused|reset|aborted)|temporar(?:y|ily)|try again|Service Unavailable|"
    r"Too Many Requests|\b50[234]\b|Network is unreachable|連線被拒絕|连接被拒绝|接続を拒否されました|"
    r"Verbindungsaufbau abgelehnt|Connexion refusée|Conexión rehusada|連線超過時間|连接超时|接続がタイムアウトしました",
    re.IGNORECASE)
# A line that names what a restart meets again.
_DETERMINISTIC = re.compile(
    r"unrecognized (?:arguments?|options?)|invalid (?:option|choice|argument)|unknown option|not supported|"
    r"syntax error|\[Errno (?:2|13|20|21|30)\]|" + ENOENT + "|" + EACCES + "|" + EROFS + "|" + LOADER
    + "|(?:\\S" + NOT_FOUND + ")", re.IGNORECASE)

ERROR_LINE = Signature(
    "error-line", _ERROR,
    "The log names no failure dscluster knows; the first error it shows is: {line}",
    "Fix what it names (read the lines around it in the log for what failed), then launch again: a restart runs the "
    "same command on the same nodes and meets it again.")
ERROR_LINE_TRANSIENT = "A restart may help: the line is of a kind that passes (a timeout, a refused connection); " \
    "if it comes back, fix what it names."
ERROR_LINE_NO_RESTART = "Fix what the line names (a missing file or command, a permission, an option not " \
    "accepted), then launch again: a restart meets the same error."


def is_error(line: str) -> bool:
    """Whether a log line is in an error's form, and no warning, benign word or consequence."""
    if not line.strip() or _NOT_AN_ERROR.search(line) or _CONSEQUENCE.search(line) or NCCL_NOTICE.search(line):
        return False
    return bool(_ERROR.search(_BENIGN.sub(" ", line)))


def first_error_line(streams: Sequence[Stream]) -> str | None:
    """The first error line of the first stream that has one (streams in the order given: earliest first)."""
    for st in streams:
        for line in st.lines:
            if is_error(line):
                return line.strip()
    return None


def transient(text: str) -> bool:
    """Whether an error's text is of a kind that passes (a timeout, a refused connection, a busy service)."""
    return bool(_TRANSIENT.search(text))


def restart(line: str) -> tuple[bool, str]:
    """(whether a restart can help, the fix) for an error line: only one of a kind that passes. In the failure corpus
    (issue 45) every log answered by its error line alone failed again on a restart."""
    if transient(line):
        return True, ERROR_LINE_TRANSIENT
    if _DETERMINISTIC.search(line):
        return False, ERROR_LINE_NO_RESTART
    return False, ERROR_LINE.fix

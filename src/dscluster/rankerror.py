"""A failing rank's own words, read out of training logs: pure parsing, no I/O.

Logs come in many shapes: one file per rank (DeepSpeed's --enable_each_rank_log, as dscluster runs write
them), or everything in one stream with a prefix per line — pdsh's `node1: ` / `10.0.0.2: `, torch's
`[rank1]: `, torchrun's `[default0]:`, a launcher backend's rank label. `streams(text)` splits a text into one stream
per (node, rank); `errors(stream)` finds each Python traceback (exception type, message, the innermost
frame in the user's own code), each native crash (`what():` of an uncaught C++ exception, a signal), and
each NCCL WARN line. `first_failure(errors)` picks the error that is the cause: a rank's own error always
beats the symptom on the others ("connection closed by peer", a watchdog timeout, the launcher's
ChildFailedError); among causes, the earliest by time stamp across nodes, not by log order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from functools import cached_property

from dscluster.logtext import ISO_TIME, Stream, compile_all, line_time, streams

__all__ = ["RankError", "Stream", "errors", "first_failure", "launcher_exits", "line_time", "streams"]

# Frames in these places are library code; the user's own frame is the innermost one elsewhere.
_LIBRARY_FRAME = re.compile(r"site-packages|dist-packages|/lib/python\d[\d.]*/|^<|/torch/|/deepspeed/|"
                            r"/dscluster/|/transformers/|/accelerate/|/runpy\.py")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
# An exception line: a (dotted) name that looks like an exception, then ": message" or nothing.
_EXC_LINE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|"
                       r"Failure|Timeout|Iteration|Fault|Resources))(?::\s?(?P<msg>.*))?$")
# After a traceback's frames, with no frame after it: any class (io.UnsupportedOperation, socket.gaierror) with a message.
_LAST_EXC = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|[A-Z]\w*): (?P<msg>\S.*)$")
# An exception line on its own, without a traceback above it: only names that end in Error/Exception.
_BARE_EXC = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)|Exception): (?P<msg>\S.*)$")
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")

# What other ranks see when one rank dies or stops answering: never the cause while a rank has its own error.
SYMPTOM_TYPES = frozenset({"ChildFailedError", "CalledProcessError", "KeyboardInterrupt", "SignalException",
                           "DistNetworkError", "BrokenPipeError", "ConnectionResetError"})
SYMPTOM_TEXT = re.compile(
    r"Connection closed by (?:remote )?peer|Connection reset by peer|Broken pipe|remote process exited|"
    r"NCCL communicator was aborted|ncclRemoteError|Socket Timeout|Watchdog caught collective operation timeout|"
    r"connection to the C10d store has failed|waiting for clients\. \d+/\d+ clients joined|"
    # a DeepSpeed op's __del__ after the op failed to load (its build, its CUDA check): the failure is above it
    r"object has no attribute 'ds_opt_\w+'|"
    r"Timed out waiting \d+ms for (?:recv|send) operation|failed to recv, got 0 bytes|"
    r"store->get\('[^'\n]*'\) got error: wait timeout after|wait timeout after \d+ms, keys: |"  # store waits: r62, r168
    r"Some NCCL operations have failed or timed out|Process group watchdog thread terminated|"
    r"got signal: (?:15|2|1)\b|received signal SIGTERM|Terminated|ProcessGroupNCCL is being destroyed|"
    r"(?:recv|send|read|write)(?:ing)? from socket|Stop_waiting response|heartbeat monitor|"
    r"The following ranks failed to|Rank \d+ (?:is|has) (?:already )?(?:disconnected|failed)|"
    r"Application timeout caused pair closure|gloo/transport/\w+/pair\.cc:\d+\]\s*(?:Read|Write) error|DistBackendError: \[\d+\] is setting up NCCL communicator", re.IGNORECASE)

_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_WHAT = re.compile(r"^\s*what\(\):\s*(?P<msg>.+)")
_SIGNAL_LINE = re.compile(
    r"(?P<line>Fatal Python error: (?P<fatal>Segmentation fault|Bus error|Aborted|Floating point exception)|"
    r"^(?P<shell>Segmentation fault|Bus error|Aborted|Killed|Floating point exception)(?: \(core dumped\))?\s*$|"
    r"\*\*\* (?P<star>SIG[A-Z]+) received|Signal (?P<num>\d+) \((?P<name>SIG[A-Z]+)\) received by PID)", re.MULTILINE)
_NCCL_WARN = re.compile(r"^(?P<host>[\w.-]+):\d+:\d+ \[\d+\] .*NCCL WARN (?P<msg>.+)$")
# NCCL < 2.12 (misc/ibvwrap.cc): WARN("Failed to open libibverbs.so[.1]") on every node without InfiniBand's user
# library, then sockets: a notice, no failure (later NCCL says INFO). Not an error here nor an error line (errorline).
_IBVERBS_NOTICE = r"Failed to open libibverbs\.so(?:\[\.1\])?\s*$"
NCCL_NOTICE = re.compile(r"NCCL WARN " + _IBVERBS_NOTICE)
# WARNs not taken for a failure: that notice, CUDA refusing calls as the process exits, a line naming a Trace.
_NCCL_NO_FAILURE = re.compile(r"^" + _IBVERBS_NOTICE + r"|Cuda failure 'driver shutting down'|\bTrace\b")
# DeepSpeed's launch.py on each node: "['python', '-u', 'train.py', '--local_rank=1'] exits with return code = -9".
_DS_EXIT = re.compile(r"exits with return code = (?P<code>-?\d+)")
# torchrun's elastic agent for the first rank that failed (torch/distributed/elastic/multiprocessing/api.py, _poll:
# "failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s", "... of fn: %s (start_method: %s)").
_TORCHRUN_EXIT = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: \d+ \(pid: \d+\) of (?:binary|fn):")
# A launcher's own words for a rank that a signal ended, where no launch.py line says it (srun's: Slurm
# starts the ranks itself) are its backend's `signal_line` (launcher/backends).
# The program's name is the usage line's first word (`(?!\S)`: never a shorter piece of it, which would
# rescan the next 40 lines once per character).
_ARGPARSE = re.compile(r"^usage: (?P<prog>\S+)(?!\S).*\n(?:.*\n){0,40}?(?P=prog): error: (?P<msg>.+)$", re.MULTILINE)

SIGNAL_NUMBERS = {9: "SIGKILL", 11: "SIGSEGV", 6: "SIGABRT", 7: "SIGBUS", 15: "SIGTERM", 8: "SIGFPE"}
SIGNAL_WORDS = {"SIGSEGV": "Segmentation fault", "SIGBUS": "Bus error", "SIGABRT": "Aborted", "SIGKILL": "Killed",
            "SIGFPE": "Floating point exception", "SIGTERM": "Terminated"}


@dataclass(frozen=True)
class RankError:
    kind: str  # python | native | signal | usage | nccl
    type: str  # the exception type, the C++ type, the signal, "usage error", "NCCL WARN"
    message: str
    file: str | None = None  # the innermost frame in the user's code
    line: int | None = None
    function: str | None = None
    rank: int | None = None
    node: str | None = None
    time: float | None = None
    symptom: bool = False
    origin: str | None = None  # the innermost frame, where a library's and not the user's (`file:line`)
    note: str = field(default="", compare=False, repr=False)  # its context where no stream holds it (a launcher's line)
    order: int = 0
    # Where the error stands in its stream: (stream, first line of its block, its own line). Its context,
    # block and after are cut from there when asked for, once: a log of many errors costs no more than its size.
    source: tuple | None = field(default=None, compare=False, repr=False)

    @cached_property
    def context(self) -> str:
        """The stream's lines before the error, as the log has them, other streams' lines included (NCCL's own
        lines carry no rank prefix, yet tell what failed under a prefixed rank's exception)."""
        if self.source is None:
            return self.note
        stream, start, _ = self.source
        if stream.positions:
            at = stream.positions[start]
            return "\n".join(stream.raw[max(0, at - 150):at])
        return "\n".join(stream.lines[max(0, start - 150):start])

    @cached_property
    def block(self) -> str:
        """The error itself: its traceback and message, and five lines after it."""
        if self.source is None:
            return ""
        stream, start, end = self.source
        return "\n".join(stream.lines[start:end + 6])

    @cached_property
    def after(self) -> str:
        """The block's lines after the error's own line."""
        if self.source is None:
            return ""
        stream, _, end = self.source
        return "\n".join(stream.lines[end + 1:end + 6])

    @property
    def where(self) -> str | None:
        return f"{self.file}:{self.line}" if self.file and self.line is not None else None

    @property
    def who(self) -> str:
        if self.rank is not None and self.node:
            return f"rank {self.rank} on {self.node}"
        if self.rank is not None:
            return f"rank {self.rank}"
        return self.node or ""

    @property
    def summary(self) -> str:
        """One line: `TypeError: unsupported operand (train.py:22)`, without rank or node."""
        head = f"{self.type}: {self.message}" if self.message else self.type
        if len(head) > 240:
            head = head[:237] + "..."
        return f"{head} ({self.where})" if self.where else head

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("note", "source", "order")}
        d = {k: v for k, v in d.items() if v is not None}
        d.update(where=self.where, summary=self.summary, who=self.who)
        return {k: v for k, v in d.items() if v not in (None, "")}


# ---- errors in one stream ---------------------------------------------------------------------------
def user_frame(frames: list[tuple[str, int, str | None]]) -> tuple[str, int, str | None] | None:
    """The innermost frame in the user's own code; the innermost of all when every frame is a library's."""
    if not frames:
        return None
    own = [f for f in frames if not is_library(f[0])]
    return (own or frames)[-1]


_PACKAGE = re.compile(r"^(?P<pkg>[A-Za-z_]\w*)(?:[/\\]|\.py\b)|[/\\](?P<known>torch|deepspeed|transformers|accelerate|peft|trl)[/\\]")


def library_of(origin: str) -> str | None:
    """The package of a library frame (RankError.origin, its path cut where installed packages live): `transformers`
    for transformers/modeling_utils.py:2520, `json` for Python's own json/decoder.py:355."""
    m = _PACKAGE.search(origin)
    return (m.group("pkg") or m.group("known")) if m else None


def is_library(path: str | None) -> bool:
    """Whether a frame's file is a library's (or Python's own), not the user's code."""
    return bool(path) and bool(_LIBRARY_FRAME.search(path))


def library_frame(frames: list[tuple[str, int, str | None]]) -> str | None:
    """`file:line` of the innermost frame, where it is a library's: what raised a rank's error, when the user's own
    frame (user_frame) only called it."""
    if not frames or not _LIBRARY_FRAME.search(frames[-1][0]) or frames[-1][0].startswith("<"):
        return None
    path = _INSTALLED.sub("", frames[-1][0])
    return f"{path}:{frames[-1][1]}"


# Where installed packages live: cut from a library frame's path, which then reads `transformers/modeling_utils.py`.
_INSTALLED = re.compile(r"^.*[/\\](?:site|dist)-packages[/\\]|^.*?[/\\]lib[/\\]python\d[\d.]*[/\\]", re.IGNORECASE)


def is_symptom(exc_type: str, message: str) -> bool:
    short = exc_type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    return short in SYMPTOM_TYPES or bool(SYMPTOM_TEXT.search(message)) or bool(SYMPTOM_TEXT.search(exc_type))


def _rank_error(stream: Stream, kind: str, typ: str, msg: str, end: int, frame, start: int | None,
                last_time: float | None, origin: str | None = None) -> RankError:
    """One RankError of `stream`, ending at its line `end` (the error's block starts at `start`)."""
    typ, msg = typ.strip(), msg.strip()
    return RankError(kind, typ, msg, frame[0] if frame else None, frame[1] if frame else None,
                     frame[2] if frame else None, stream.rank, stream.node,
                     last_time if last_time is not None else stream.time,
                     is_symptom(typ, msg), origin, order=stream.order * 100000 + end,
                     source=(stream, end if start is None else start, end))


def _read_traceback(lines: list[str], i: int):
    """At a `Traceback` line: (what it raised as (type, message, line) or None, its frames, the line to read
    on from, whether another traceback follows as its cause or context)."""
    frames: list[tuple[str, int, str | None]] = []
    j, exc = i + 1, None
    while j < len(lines) and j < i + 600:
        if lines[j].lstrip().startswith("Traceback (most recent call last)"):
            break  # a traceback cut off before its exception: the next one is read on its own
        fm = _FRAME.match(lines[j])
        if fm:
            frames.append((fm.group("file"), int(fm.group("line")), fm.group("func")))
        elif not lines[j][:1].isspace() and lines[j].strip():
            em = _EXC_LINE.match(lines[j].strip()) or frames and not (j + 1 < len(lines) and _FRAME.match(
                lines[j + 1])) and _LAST_EXC.match(lines[j].strip())
            if em:
                exc = (em.group("type"), em.group("msg") or "", j)
                break
        j += 1
    if exc is None:
        return None, frames, i + 1, False
    # A chained exception: the last one is what was raised, keep reading to it.
    k = exc[2] + 1
    while k < len(lines) and k < exc[2] + 8 and not lines[k].startswith(_CHAINED):
        k += 1
    if k < len(lines) and lines[k].startswith(_CHAINED):
        return None, frames, k + 1, True
    msg = exc[1]
    if not msg.strip() and exc[2] + 1 < len(lines) and lines[exc[2] + 1].strip() and \
            not lines[exc[2] + 1].startswith(("Traceback", "[")):
        msg = lines[exc[2] + 1]
    return (exc[0], msg, exc[2]), frames, exc[2] + 1, False


# torch's ExceptionWrapper.reraise (torch/_utils.py): a DataLoader worker's, a DataParallel replica's or the pin memory
# thread's error raised again in the main process (same type, saying where), then `Original Traceback`: the worker's.
_CAUGHT = re.compile(r"^Caught [\w.]+ in (?:DataLoader worker process \d+|replica \d+ on device \d+|pin memory thread"
                     r"[\w ]{0,40})\.?\s*$")


def _original(lines: list[str], exc, frames, i: int, chained: bool):
    """_read_traceback's answer, or for an error torch raised again the worker's own (the user's code, not the reraise)."""
    if exc is not None and _CAUGHT.match(exc[1]) and exc[2] + 1 < len(lines) and \
            lines[exc[2] + 1].lstrip().startswith("Original Traceback (most recent call last)"):
        orig, orig_frames, j, orig_chained = _read_traceback(lines, exc[2] + 1)
        while orig is None and orig_chained and j + 1 < len(lines):  # raised from another in the worker: the last
            orig, orig_frames, j, orig_chained = _read_traceback(lines, j + (not lines[j].strip()))
        if orig is not None:
            return orig, orig_frames, j, orig_chained
    # torch.distributed.checkpoint's CheckpointException (checkpoint/api.py, __str__): "CheckpointException ranks:
    # dict_keys([...])" then each failed rank's own traceback, "Traceback (most recent call last): (RANK n)": the
    # first rank's error is what failed (its frames after the caller's, which name the script's dcp call).
    if exc is not None and exc[0].endswith("CheckpointException") and exc[2] + 1 < len(lines) and \
            lines[exc[2] + 1].lstrip().startswith("Traceback (most recent call last): (RANK "):
        orig, orig_frames, j, orig_chained = _read_traceback(lines, exc[2] + 1)
        if orig is not None:
            return orig, frames + orig_frames, j, orig_chained
    # torch.multiprocessing.spawn's ProcessRaisedException (spawn.py, ProcessContext.join): "-- Process N terminated
    # with the following error:", then the child's own traceback, which is what failed.
    if exc is not None and exc[0].endswith("ProcessRaisedException"):
        k = next((k for k in range(exc[2] + 1, min(exc[2] + 5, len(lines))) if lines[k].startswith("Traceback")), None)
        if k is not None and "terminated with the following error" in lines[k - 1]:
            return _read_traceback(lines, k)
    return exc, frames, i, chained
def _pasted_frames(lines: list[str], i: int) -> int:
    """The first line of the indented traceback frames (`  File "...", line N, in f` and their code lines) right
    above line `i`, or `i` where none are; a frame line that lost its indentation in the paste (an excerpt that
    begins at a frame) is one too, and so is an indented code line right above with no frame line."""
    start, j = i, i - 1
    while j >= 0 and i - j <= 600 and lines[j].strip() and (lines[j][:1].isspace() or _FRAME.match(lines[j])):
        if _FRAME.match(lines[j]):
            start = j
        j -= 1
    # An excerpt that begins at the last frame's code line (its `File` line cut off): that line is the error's too.
    if start == i and i > 0 and lines[i - 1][:1].isspace() and lines[i - 1].strip():
        start = i - 1
    return start


def errors(stream: Stream) -> list[RankError]:
    """Every error of one stream, in order: Python tracebacks (a chained one as what it finally raised),
    bare exception lines, C++ terminations, signals, NCCL warnings, argparse usage errors."""
    lines = stream.lines
    # The year of the log's first ISO time stamp: time stamps that carry no year are read in it.
    year = next((int(m.group("y")) for m in map(ISO_TIME.search, lines) if m), 1970)
    found: list[RankError] = []
    last_time, i, chained, first_tb = None, 0, False, 0

    def make(kind, typ, msg, end, frame=None, start=None, origin=None):
        return _rank_error(stream, kind, typ, msg, end, frame, start, last_time, origin)

    while i < len(lines):
        ln = lines[i]
        t = line_time(ln, year)
        if t is not None:
            last_time = t
        if ln.startswith("Traceback (most recent call last)") or ln.lstrip().startswith("Traceback (most recent call last)"):
            first_tb = first_tb if chained else i
            # Python's "Exception ignored in: <function X.__del__>": a destructor at exit, not the cause after another
            at_exit = i > 0 and lines[i - 1].lstrip().startswith("Exception ignored in") and bool(found)
            exc, frames, i, chained = _original(lines, *_read_traceback(lines, i))
            if exc is not None and not at_exit:
                found.append(make("python", *exc, user_frame(frames), first_tb, library_frame(frames)))
            continue
        m = _BARE_EXC.match(ln)
        if m and not (i + 1 < len(lines) and lines[i + 1].lstrip().startswith("Traceback")):
            k = next((j for j in range(i + 1, min(i + 4, len(lines))) if lines[j].strip()), None)
            if k is not None and lines[k].startswith(_CHAINED):
                # A link of a chain printed without a traceback of its own (huggingface_hub's httpcore ConnectError
                # under its retries): what the chain finally raised, read on, is the rank's error.
                first_tb, chained, i = first_tb if chained else i, True, k + 1
                continue
            # An exception line without its traceback (a pasted excerpt, a launcher's summary), its frames if pasted.
            found.append(make("python", m.group("type"), m.group("msg") or "", i, start=_pasted_frames(lines, i)))
            i += 1
            continue
        m = _TERMINATE.search(ln)
        if m:
            what = next((w for w in lines[i + 1:i + 4] if _WHAT.match(w)), None)
            msg = _WHAT.match(what).group("msg") if what else ""
            found.append(make("native", m.group("type"), msg, i + (1 if what else 0)))
            i += 1
            continue
        e = _signal_error(make, ln, i) or _nccl_error(make, stream, ln, i)
        if e is not None:
            found.append(e)
        i += 1
    text = stream.text
    for m in _ARGPARSE.finditer(text):
        end = text.count("\n", 0, m.end())
        found.append(make("usage", "usage error", f"{m.group('prog')}: {m.group('msg')}", end,
                          start=text.count("\n", 0, m.start())))
    return found


def _signal_error(make, ln: str, i: int) -> RankError | None:
    """A line saying a process died of a signal (errors' make builds the error)."""
    m = _SIGNAL_LINE.search(ln)
    if not m:
        return None
    name = m.group("fatal") or m.group("shell") or SIGNAL_WORDS.get(m.group("star") or m.group("name") or "", "")
    sig = next((k for k, v in SIGNAL_WORDS.items() if v == name), m.group("star") or m.group("name") or "")
    return make("signal", sig or name, name, i)


def _nccl_error(make, stream: Stream, ln: str, i: int) -> RankError | None:
    """An `NCCL WARN` line that reports a failure, on the node its own prefix names where the stream has none."""
    m = _NCCL_WARN.match(ln)
    if not m or _NCCL_NO_FAILURE.search(ln[ln.find("NCCL WARN ") + 10:]):
        return None
    e = make("nccl", "NCCL WARN", m.group("msg"), i)
    return RankError(**{**{f.name: getattr(e, f.name) for f in fields(e)}, "node": stream.node or m.group("host")})


def launcher_exits(stream: Stream) -> list[RankError]:
    """Ranks that DeepSpeed's launch.py, torchrun's agent or a backend's launcher reported dead by a signal, with no
    words of their own, in one line (torchrun's summary is read by torchrunsummary.signals)."""
    out = []
    for i, ln in enumerate(stream.lines):
        m = _DS_EXIT.search(ln) or _TORCHRUN_EXIT.search(ln)
        if m and int(m.group("code")) < 0:
            sig = -int(m.group("code"))
            name = SIGNAL_NUMBERS.get(sig, f"signal {sig}")
            out.append(RankError("signal", name, SIGNAL_WORDS.get(name, name), rank=None, node=stream.node,
                                 time=line_time(ln), symptom=name == "SIGTERM", note=ln,
                                 order=stream.order * 100000 + i))
    for i, ln in enumerate(stream.lines):
        m = next((hit for p in _signal_lines() if (hit := p.search(ln))), None)
        if m and m.group("what") in SIGNAL_WORDS.values():
            name = next(k for k, v in SIGNAL_WORDS.items() if v == m.group("what"))
            out.append(RankError("signal", name, m.group("what"), rank=int(m.group("task")), node=m.group("node"),
                                 time=line_time(ln), note=ln, order=stream.order * 100000 + i))
    return out


def _signal_lines() -> tuple[re.Pattern, ...]:
    from dscluster.launcher import backends  # noqa: PLC0415 - the registry, asked when a log is read

    return compile_all(backends.signal_lines())


def first_failure(found: Iterable[RankError], hint_rank: int | None = None) -> RankError | None:
    """The cause among the errors: a rank's own error before any symptom; then the earliest by time stamp
    (across nodes), then the rank the supervisor saw go first (`hint_rank`), then log order."""
    found = list(found)
    if not found:
        return None

    def key(e: RankError):
        return (e.symptom, e.kind == "nccl", e.time if e.time is not None else float("inf"),
                0 if hint_rank is not None and e.rank == hint_rank else 1, e.order)
    return min(found, key=key)

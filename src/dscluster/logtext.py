"""How a log's text is read. Logs are hostile input: a rank's log is written by the user's program (and, on
shared storage, by the node user), so reading one costs time in proportion to its size whatever it holds.

- `bounded_lines(text)`: its lines, each at most LINE_LIMIT characters (a longer one keeps its head and its
  tail, where launchers and exceptions put what matters), `\r\n` and a bare `\r` read as line ends.
- `streams(text)`: one Stream per (node, rank), cut by the prefixes launchers put in front of lines —
  pdsh's `node1: ` / `10.0.0.2: `, torch's `[rank1]: `, torchrun's `[default0]:`, a launcher backend's
  rank label (its `rank_label`).
- `line_time(line)`: the time stamp a line carries.
- `printable(text)`: text from a log or a run record made safe for a terminal (views print through it).

Every pattern that reads log text is linear in the text: no `.*` between two parts that may repeat on a
line, no `\\s` that runs across lines (tests/unit/test_explain_linear.py measures each one on the worst
lines its own words make).
"""

from __future__ import annotations

import calendar
import functools
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from dscluster import fsutil

# A log line longer than this is read as its head and its tail (what a launcher or an exception puts at
# either end), joined by " ... ": logs are written by the user's program, and no line may make reading
# them slower than its length (tests/unit/test_explain_linear.py).
LINE_LIMIT = 2000
_HEAD = LINE_LIMIT * 3 // 4


def bounded_lines(text: str) -> list[str]:
    """The lines of a log, each cut to LINE_LIMIT characters (head and tail kept)."""
    return [ln if len(ln) <= LINE_LIMIT else f"{ln[:_HEAD]} ... {ln[_HEAD - LINE_LIMIT:]}"
            for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


# Prefixes a launcher puts in front of a rank's lines, outermost first.
_TORCH_RANK = re.compile(r"^\[rank(?P<rank>\d+)\]:\s?")
_TORCHRUN_LOCAL = re.compile(r"^\[(?:default|[a-z]+)(?P<local>\d+)\]:\s?")
_HOST_PREFIX = re.compile(r"^(?P<host>[A-Za-z0-9][\w.-]*|\d+\.\d+\.\d+\.\d+): ")
_NOT_A_HOST = (r"(?:Error|Exception|Exit|Interrupt|Warning|Failure|Timeout|Iteration|Fault)$|^\d+$|^(?:usage|error|fix|warning|"
               r"note|hint|info|debug|nccl|pdsh@.*|ssh|bash|sh|python\d?[\d.]*|"
               # the toolchain's and package managers' own `PROG: error: ...` lines
               r"collect2|ld|ld\.\w+|gcc|cc|nvcc|ptxas|nvlink|cicc|clang|cmake|make|ninja|pip\d?[\d.]*|conda|mamba|apt|"
               r"apt-get|dnf|yum|"
               r"cause|what|traceback|file|line|step|loss|epoch|[\w.-]+\.py|{programs})$")


@functools.cache
def _not_a_host(programs: tuple[str, ...]) -> re.Pattern:
    """What a `NAME: ` prefix is when it is no host: a word of a message, or a program that names itself (the
    backends' `programs`: their launchers' and schedulers' own lines)."""
    return re.compile(_NOT_A_HOST.replace("{programs}", "|".join(programs)), re.IGNORECASE)


# Time stamps that launchers and libraries print: DeepSpeed/logging `2024-05-01 10:00:00,123`, ISO
# `2024-05-01T10:00:00.123`, torchrun's `2024-05-01_10:00:00`, glog's `E0501 10:00:00.123456`.
ISO_TIME = re.compile(r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T_](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d+))?")
_GLOG_TIME = re.compile(r"\b[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)\.(?P<f>\d+)")


@dataclass(frozen=True)
class Stream:
    """One rank's (or one node's) lines of a log, prefixes removed."""
    node: str | None
    rank: int | None
    lines: tuple[str, ...]
    time: float | None = None  # fallback time for its errors (e.g. the file's mtime), else None
    order: int = 0
    raw: tuple[str, ...] = ()  # the whole text the stream was cut from, prefixes kept
    positions: tuple[int, ...] = ()  # each line's index in `raw`

    @cached_property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# ---- streams ----------------------------------------------------------------------------------------
def _host_prefixes(lines: list[str]) -> set[str]:
    """The `word: ` prefixes that are node names: ones that start many lines and do not look like an
    exception or a keyword (pdsh prefixes every line of a node with its host name)."""
    counts: dict[str, int] = {}
    for line in lines:
        m = _HOST_PREFIX.match(line)
        if m:
            counts[m.group("host")] = counts.get(m.group("host"), 0) + 1
    hosts = set()
    for host, n in counts.items():
        if _not_a_host(_programs()).search(host):
            continue
        if n >= 2 or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", host):
            hosts.add(host)
    return hosts


def _rank_label(lines: list[str]) -> re.Pattern | None:
    """The label a launcher backend puts in front of every rank's line (launcher/backends: `rank_label`,
    a scheduler's `3: `), when over a third of the lines carry it."""
    from dscluster.launcher import backends  # noqa: PLC0415 - the registry, asked when a log is read

    for label in compile_all(backends.rank_labels()):
        if sum(1 for ln in lines if label.match(ln)) > max(3, len(lines) // 3):
            return label
    return None


def _programs() -> tuple[str, ...]:
    from dscluster.launcher import backends  # noqa: PLC0415 - the registry, asked when a log is read

    return backends.programs()


@functools.cache
def compile_all(patterns: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    """The patterns compiled, once per tuple (the registry's backends ask for the same ones every time)."""
    return tuple(re.compile(p) for p in patterns)


# dscluster's own `logs` (runs/views/attach.py): `[NODE RANK] ` in front of a rank's file's lines, `[launcher] ` in
# front of the launcher's; the outermost prefix of a log a user pastes from it.
_DSCLUSTER_PREFIX = re.compile(r"^\[(?:launcher|(?P<host>[A-Za-z0-9][\w.:-]*) (?P<rank>\d+))\] ")
_SUPERVISOR_SAYS = re.compile(r"^\[dscluster \d\d:\d\d:\d\d\] (?P<what>failure detected|attempt \d+)[:]")


def _dscluster_lines(raw: list[str]) -> list[tuple[str | None, int | None, str]] | None:
    """`dscluster logs` output (over half its lines carry its prefixes): each line's node, rank and text without the
    prefix; None for any other text. The launcher's lines between the supervisor's `failure detected` and the next
    attempt are its teardown (launch.py killing the ranks), blank here as the supervisor never reads them (verdict.py
    caps launcher.log where it detected the failure)."""
    found = [_DSCLUSTER_PREFIX.match(ln) for ln in raw]
    if sum(1 for m in found if m) * 2 <= len(raw):
        return None
    out, teardown = [], False
    for m, ln in zip(found, raw):
        if m and m.group("rank"):
            out.append((m.group("host"), int(m.group("rank")), ln[m.end():]))
            continue
        text = ln[m.end():] if m else ln
        if m and (says := _SUPERVISOR_SAYS.match(text)):
            teardown = says.group("what") == "failure detected"
            out.append((None, None, text))
        else:
            out.append((None, None, "" if m and teardown else text))
    return out


def streams(text: str, node: str | None = None, rank: int | None = None, time: float | None = None,
            order: int = 0) -> list[Stream]:
    """Split a log into streams by the prefixes in front of its lines. `node`/`rank`: what the whole text
    is known to be (a rank's own log file), used where a line names nothing itself."""
    raw = bounded_lines(text)
    ours = _dscluster_lines(raw)
    body = [ln for _, _, ln in ours] if ours else raw
    hosts = _host_prefixes(body)
    label = _rank_label(body)
    keyed: dict[tuple[str | None, int | None], list[str]] = {}
    where: dict[tuple[str | None, int | None], list[int]] = {}
    for pos, line in enumerate(body):
        n, r = (ours[pos][0], ours[pos][1]) if ours and ours[pos][1] is not None else (node, rank)
        m = _HOST_PREFIX.match(line)
        if m and m.group("host") in hosts:
            n, line = m.group("host"), line[m.end():]
        m = _TORCH_RANK.match(line)
        if m:
            r, line = int(m.group("rank")), line[m.end():]
        else:
            m = _TORCHRUN_LOCAL.match(line)
            if m:
                line = line[m.end():]
                n = f"{n or ''}#{m.group('local')}" if n is None else n  # a stream per local rank
                r = r if r is not None else None
            elif label:
                m = label.match(line)
                if m:
                    r, line = int(m.group("rank")), line[m.end():]
        keyed.setdefault((n, r), []).append(line)
        where.setdefault((n, r), []).append(pos)
    out = []
    whole = tuple(raw)
    for i, ((n, r), lines) in enumerate(keyed.items()):
        positions = tuple(where[(n, r)])
        if n is not None and n.startswith("#"):
            n = None
        out.append(Stream(n, r, tuple(lines), time, order * 1000 + i, whole, positions))
    return out


# ---- time stamps ------------------------------------------------------------------------------------
def line_time(line: str, year: int = 1970) -> float | None:
    m = ISO_TIME.search(line)
    if m:
        y = int(m.group("y"))
    else:
        m = _GLOG_TIME.search(line)
        y = year
    if not m:
        return None
    try:
        t = calendar.timegm((y, int(m.group("mo")), int(m.group("d")), int(m.group("h")), int(m.group("mi")),
                             int(m.group("s")), 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    frac = m.group("f")
    return t + (int(frac) / 10 ** len(frac) if frac else 0.0)


# Characters a terminal acts on rather than shows: C0 controls but tab and newline (ESC starts every control
# sequence: colours, cursor moves, a window title, a hyperlink, clearing the screen; CR rewrites a line), DEL,
# C1 controls (0x9b is CSI on its own), and the bidirectional overrides that make a line read other than it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escaped(m: re.Match) -> str:
    c = ord(m.group(0))
    if c == 0x0d:
        return "\\r"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """Text from a log or a run record made safe to print on a terminal: every control character shown as
    its escape (`\\x1b`, `\\r`), never sent raw. The one sanitiser of the views (`explain`, `status`, a run's
    outcome): a log is written by the user's program and, on shared storage, by the node user. `logs` streams a
    log as it is (like `tail -f`: progress bars and colours are the program's own output, asked for by name).
    `one_line`: a newline is escaped too (a field shown on one line)."""
    out = _CONTROL.sub(_escaped, text)
    return out.replace("\n", "\\n") if one_line else out


def read_tail(path: Path, tail_bytes: int = 64_000, upto: int | None = None, since: int = 0) -> str | None:
    """The last `tail_bytes` of a log file (from byte `since`, up to byte `upto`), opened by fsutil's
    no-symlink rule: rank logs are the node user's files, and the evidence lands in run.json."""
    try:
        with os.fdopen(fsutil.open_file(path), "rb") as f:
            f.seek(0, 2)
            end = f.tell() if upto is None else min(f.tell(), upto)
            start = max(0, end - tail_bytes, since)
            f.seek(start)
            return f.read(max(0, end - start)).decode("utf-8", "replace")
    except OSError:
        return None


_RANK_FILE = re.compile(r"_rank(\d+)\.log$")


def rank_of_file(name: str) -> int | None:
    """The rank of a DeepSpeed per-rank log (`*_rank{N}.log`, --enable_each_rank_log), else None."""
    m = _RANK_FILE.search(name)
    return int(m.group(1)) if m else None

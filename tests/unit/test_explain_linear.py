"""Logs are hostile input: reading one costs time in proportion to its size, whatever it holds.

Load-independent measures only (the machine is shared): CPU time of this process (`time.process_time`), the least of
a few runs. Every compiled pattern the explainer reads (every signature table, and every pattern of the modules it
imports: refusals.KINDS, errorline, rankerror, sigwords, launchcmd, mixedversions, collectives, the launcher
backends' lines...) is searched over texts of 8 KB and of 32 KB made of its worst lines: its own literal pieces
(brackets and parentheses kept: `[a] vs [b]`, `fcntl.flock(`), and prefixes of its matches cut before they complete
(of texts shaped like a match, read from the pattern itself, and of its real matches in the corpus logs,
tests/data/failures and tests/data/explain), each repeated with and without separators. Linear work grows four-fold
from one to the other; a pattern that backtracks over a line (each occurrence of its first words read to the line's
end) grows sixteen-fold. Over RATIO_LIMIT fails, on a search that costs more than FLOOR_S at all; so does any search
of 32 KB over CEILING_S (a window of thousands of characters read again from each occurrence is linear, at a cost
no log should buy). A new signature is checked the day it is added, on its own words.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:  # the regular expression parser of CPython 3.11+, older releases' sre_parse
    from re import _constants as sre
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants as sre
    import sre_parse

import dscluster
from dscluster import explain, logtext, rankerror
from dscluster.launcher import backends
from dscluster.runs.supervising import detect

SMALL, BIG, BIGGER = 8_000, 32_000, 128_000
RATIO_LIMIT = 8  # four times the text: linear work grows 4-fold, quadratic 16-fold
SCREEN_S = 0.0004  # a search of 8 KB under this (and under 4 times the pattern's cost on plain text) is not measured again
CEILING_S = 0.15  # no search of 32 KB may cost more (2 MB would cost ten seconds)
SEPARATORS = ("", "\n")  # a line of one word, or lines of it; a piece also with spaces between
DATA = Path(__file__).resolve().parents[1] / "data"


# What explain reads: its own patterns, every signature table (sig*.py, a new one included the day it is added), the
# modules it asks (errorline, rankerror, logtext, launchcmd, mixedversions, refusals, collectives) and the launcher
# backends' lines and signatures (launcher/backends), read by detect, rankerror and logtext.
_READ_BY_EXPLAIN = sorted(
    ["dscluster.explain", "dscluster.errorline", "dscluster.rankerror", "dscluster.logtext", "dscluster.launchcmd",
     "dscluster.mixedversions", "dscluster.refusals", "dscluster.collectives", "dscluster.strerror",
     "dscluster.runs.supervising.detect", "dscluster.runs.supervising.verdict"]
    + [f"dscluster.{p.stem}" for p in Path(dscluster.__file__).parent.glob("sig*.py")]
    + [m.name for m in pkgutil.walk_packages(backends.__path__, "dscluster.launcher.backends.") if not m.ispkg]
    + ["dscluster.launcher.backends"])


def _patterns() -> list[tuple[str, re.Pattern]]:
    """Every compiled pattern of the modules explain reads (module-level, or in their tables: tuples, dicts,
    signatures), each once, named where it was first found."""
    found: dict[tuple[str, int], tuple[str, re.Pattern]] = {}

    def walk(name: str, value, depth: int) -> None:
        if isinstance(value, re.Pattern):
            found.setdefault((value.pattern, value.flags), (name, value))
        elif depth >= 4:
            return
        elif isinstance(value, (tuple, list, frozenset, set)):
            for i, item in enumerate(value):
                label = getattr(item, "name", None) or (item[0] if isinstance(item, tuple) and item
                                                         and isinstance(item[0], str) else i)
                walk(f"{name}[{label}]", item, depth + 1)
        elif isinstance(value, dict):
            for k, item in value.items():
                walk(f"{name}[{k}]", item, depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                walk(f"{name}.{f.name}", getattr(value, f.name), depth + 1)

    for mod in _READ_BY_EXPLAIN:
        for k, v in sorted(vars(importlib.import_module(mod)).items()):
            walk(f"{mod}.{k}", v, 0)
    # What each launcher backend's launcher prints (launcher/backends), read by detect, rankerror and logtext.
    walk("dscluster.runs.supervising.detect.failure_line()", detect.failure_line(), 0)
    for name in backends.names():
        for trait in ("signal_line", "rank_label"):
            if getattr(backends.get(name), trait):
                walk(f"backend {name}.{trait}", re.compile(getattr(backends.get(name), trait)), 0)
    # Which one of a name: signatures share names (several patterns of one cause).
    named: dict[str, int] = {}
    out = []
    for name, pattern in found.values():
        named[name] = named.get(name, 0) + 1
        out.append((name if named[name] == 1 else f"{name}#{named[name]}", pattern))
    return out


# ---- a pattern's own words, read from its parse tree ----

_CANDIDATES = "a1 x/._-:'\"([\tZ"
_CATEGORY = {sre.CATEGORY_DIGIT: str.isdigit, sre.CATEGORY_SPACE: str.isspace,
             sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_"}
_NOT = {sre.CATEGORY_NOT_DIGIT: sre.CATEGORY_DIGIT, sre.CATEGORY_NOT_SPACE: sre.CATEGORY_SPACE,
        sre.CATEGORY_NOT_WORD: sre.CATEGORY_WORD}
_REPEATS = tuple(op for op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)) if op)


def _in_class(ch: str, items) -> bool:
    negate, hit = False, False
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            hit |= ord(ch) == av
        elif op is sre.RANGE:
            hit |= av[0] <= ord(ch) <= av[1]
        elif op is sre.CATEGORY:
            hit |= _CATEGORY[av](ch) if av in _CATEGORY else not _CATEGORY[_NOT[av]](ch) if av in _NOT else False
    return hit != negate


def _char(op, av) -> str | None:
    """One character this node matches (a class made concrete: its first literal), None if not one character."""
    if op is sre.LITERAL:
        return chr(av)
    if op is sre.NOT_LITERAL:
        return "a" if av != ord("a") else "b"
    if op is sre.ANY:
        return "a"
    if op is sre.IN:
        firsts = [chr(a) for o, a in av if o is sre.LITERAL] + [chr(a[0]) for o, a in av if o is sre.RANGE]
        return next((c for c in [*firsts, *_CANDIDATES] if _in_class(c, av)), None)
    return None


def _subs(op, av) -> list:
    if op is sre.BRANCH:
        return list(av[1])
    if op is sre.SUBPATTERN or op in _REPEATS or op in (sre.ASSERT, sre.ASSERT_NOT):
        return [av[-1]]
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return [av]
    if op is sre.GROUPREF_EXISTS:
        return [s for s in av[1:] if s is not None]
    return []


def pieces(pattern: re.Pattern) -> set[str]:
    """The literal runs of a pattern: escapes undone, classes made concrete, brackets and parentheses kept."""
    runs: set[str] = set()

    def walk(seq) -> None:
        run = ""
        for op, av in seq:
            c = _char(op, av)
            if c is not None:
                run += c
                continue
            if len(run) >= 2:
                runs.add(run)
            run = ""
            for sub in _subs(op, av):
                walk(sub)
        if len(run) >= 2:
            runs.add(run)

    walk(sre_parse.parse(pattern.pattern, pattern.flags))
    return runs


def shaped_like_matches(pattern: re.Pattern, limit: int = 24) -> list[str]:
    """Texts shaped like matches of the pattern: the first alternative of every alternation, then each other
    alternative of each in turn; each repetition at its least count, one at least (a back reference repeats its
    group's text; lookarounds take no text)."""
    tree = sre_parse.parse(pattern.pattern, pattern.flags)
    order: list[int] = []  # each alternation met, by id, in the order met
    sizes: dict[int, int] = {}

    def gen(seq, choice: dict[int, int], groups: dict[int, str]) -> str:
        out = []
        for op, av in seq:
            c = _char(op, av)
            if c is not None:
                out.append(c)
            elif op is sre.BRANCH:
                if id(av) not in sizes:
                    order.append(id(av))
                    sizes[id(av)] = len(av[1])
                out.append(gen(av[1][choice.get(id(av), 0)], choice, groups))
            elif op is sre.SUBPATTERN:
                text = gen(av[-1], choice, groups)
                if av[0]:
                    groups[av[0]] = text
                out.append(text)
            elif op in _REPEATS:
                out.append("".join(gen(av[2], choice, groups) for _ in range(min(max(av[0], 1), av[1], 3))))
            elif op is getattr(sre, "ATOMIC_GROUP", None):
                out.append(gen(av, choice, groups))
            elif op is sre.GROUPREF:
                out.append(groups.get(av, ""))
            elif op is sre.GROUPREF_EXISTS:
                out.append(gen(av[1], choice, groups))
            elif op is sre.AT and av in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING) and out:
                out.append("\n")
        return "".join(out)

    found = [gen(tree, {}, {})]
    i = 0
    while i < len(order) and len(found) < limit:
        key = order[i]
        found += [gen(tree, {key: k}, {}) for k in range(1, min(sizes[key], limit - len(found) + 1))]
        i += 1
    return [t for t in dict.fromkeys(found) if t]


def cut_short(text: str) -> list[str]:
    """A match's prefixes cut before it completes: at each quarter, and one character short."""
    text = text[:4_000]
    return [text[:i] for i in sorted({len(text) * k // 4 for k in (1, 2, 3)} | {len(text) - 1}) if i >= 2]


@functools.lru_cache(maxsize=1)
def _corpus() -> str:
    logs = sorted((DATA / "failures").glob("*/log.txt")) + sorted((DATA / "explain").glob("*.log"))
    return "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)


def units(pattern: re.Pattern) -> list[str]:
    """The worst lines' words of a pattern: its literal pieces (alone, and each with a space after it), prefixes of
    texts shaped like its matches and of (up to three) real matches in the corpus logs, and a few common words."""
    found = {w for p in pieces(pattern) for w in (p, p + " ")}
    for text in shaped_like_matches(pattern):
        found.update(cut_short(text))
    real = (m.group(0) for m in pattern.finditer(_corpus()) if m.end() - m.start() >= 2)
    for text in list(dict.fromkeys(t for _, t in zip(range(3), real))):
        found.update(cut_short(text))
    return sorted(found) + [" ", "\t", "a", "1", "a.", "[rank1]: "]


def repeated(word: str, size: int) -> str:
    return word * max(1, size // len(word))


def cost(fn, text: str, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


def grows_linearly(fn, word: str, screen: float = SCREEN_S) -> tuple[bool, float, float]:
    """Whether fn's CPU time on `word` repeated to 32 KB stays within RATIO_LIMIT times its time on 8 KB, and under
    CEILING_S (the least of three runs each, once one run of 8 KB costs more than `screen`). A ratio over the limit
    is looked at again four times further (128 KB against 32 KB), where the times are larger than a busy machine's
    noise: it fails only if it is over the limit there too."""
    small = cost(fn, repeated(word, SMALL))
    if small < screen:
        return True, small, 0.0
    small, big = cost(fn, repeated(word, SMALL), 3), cost(fn, repeated(word, BIG), 3)
    if big >= CEILING_S:
        return False, small, big
    if big <= RATIO_LIMIT * small:
        return True, small, big
    bigger = cost(fn, repeated(word, BIGGER), 2)
    return bigger <= RATIO_LIMIT * big, big, bigger


def plain_cost(pattern: re.Pattern) -> float:
    """A pattern's cost on 8 KB of plain words: what a search of it costs anyway (a long alternation of words read
    without regard to case is slow on any text, and linear)."""
    return cost(pattern.search, repeated("plain words of a log line\n", SMALL), 3)


PATTERNS = _patterns()


@pytest.mark.parametrize("name,pattern", PATTERNS, ids=[n for n, _ in PATTERNS])
def test_every_pattern_is_linear_on_the_worst_lines_of_its_own_words(name, pattern):
    screen = max(SCREEN_S, 4 * plain_cost(pattern))
    for unit in units(pattern):
        for sep in SEPARATORS:
            ok, small, big = grows_linearly(pattern.search, unit + sep, screen)
            assert ok, f"{name}: {small:.4f}s, then {big:.4f}s on four times the text ({(unit + sep)[:60]!r} repeated)"


def test_the_worst_lines_hold_the_words_a_pattern_brackets():
    """The reviewer's two (review 59): words in brackets and parentheses are generated with them, and a real match's
    prefix is among the units (both patterns were quadratic on exactly these)."""
    reused = re.compile(r"Reused local directory: \[[^\]\n]*\] vs \[[^\]\n]*\]\. Provide a different one")
    assert "Reused local directory: [" in pieces(reused)
    assert any(u.startswith("Reused local directory: [a] vs [") for u in units(reused))
    flock = re.compile(r"fcntl\.flock\(\w+, fcntl\.LOCK_EX\)[^\n]*\n[^\n]*OSError: \[Errno 38\]")
    assert "fcntl.flock(" in pieces(flock) and "OSError: [Errno 38]" in pieces(flock)
    word = "Reused local directory: ["
    assert cost(reused.search, repeated(word, BIG)) > RATIO_LIMIT * cost(reused.search, repeated(word, SMALL))
    assert len(PATTERNS) > 300 and {"dscluster.refusals.KINDS[refused-call][1]", "dscluster.mixedversions._VERSION",
                                    "dscluster.collectives._RANK_OF"} <= {n for n, _ in PATTERNS}


# Whole logs as a hostile program may write them: one huge line of one word, many short ones, whitespace
# only, tracebacks cut off, exception lines by the thousand, usage lines that never end.
WORST_LOGS = {
    "one NET/IB line": "NET/IB " * 20_000,
    "NET/IB lines": "NET/IB NET/IB NET/IB NET/IB\n" * 5_000,
    "whitespace": " \n\t\n" * 30_000,
    "cut tracebacks": "Traceback (most recent call last):\n" * 4_000,
    "exception lines": "ValueError: bad value\n" * 6_000,
    "long exception lines": ("ValueError: " + "x" * 3_000 + "\n") * 40,
    "usage lines": ("usage: " + "p" * 1_900 + "\n") * 60,
    "local_rank line": "--local_rank=1 " * 10_000,
    "orted line": "orted " * 20_000,
    "NCCL line": "NCCL " * 25_000,
    "pdsh prefixes": "node1: node1: node1: error: x\n" * 5_000,
    "no newline at all": "a" * 150_000,
    "spawned commands": "process 1 spawned with command: [" * 5_000,
    "error words": "error_handler --on-error 0 errors Error: failed cannot " * 3_000,
    "quoted paths": ("cannot open '" + "a/" * 300 + "' for 'x' reading " * 20 + "\n") * 50,
    "runner cmd lines": ("cmd = python -m deepspeed.launcher.launch " + "'a " * 600 + "\n") * 100,
}


def doubles_linearly(fn, text: str) -> tuple[bool, float, float]:
    """Whether fn's CPU time on text doubled stays within 3x of its time on text (min of 3 runs once it looks
    worse, so one busy moment does not fail it)."""
    small, big = cost(fn, text), cost(fn, text + text)
    if big < 0.01 or big < 3 * small:
        return True, small, big
    small, big = cost(fn, text, 3), cost(fn, text + text, 3)
    return big < 0.01 or big < 3 * small, small, big


@pytest.mark.parametrize("kind", sorted(WORST_LOGS))
def test_explain_time_grows_linearly_with_the_log_whatever_it_holds(kind):
    ok, small, big = doubles_linearly(explain.explain, WORST_LOGS[kind])
    assert ok, f"{kind}: {small:.3f}s, then {big:.3f}s on twice the text"


def test_a_long_line_is_read_as_its_head_and_tail():
    line = "exits with return code = -9".rjust(50_000, "x")
    (read,) = logtext.bounded_lines(line)
    assert len(read) <= logtext.LINE_LIMIT + 5 and read.endswith("exits with return code = -9")
    assert explain.explain(f"['python', '-u', 'train.py', '{'a' * 30_000}'] exits with return code = -9\n") \
        .signature == "killed"


def test_many_errors_cost_their_size_not_their_count_times_context():
    """Each error's context (150 lines before it) is cut only when read: 6000 errors are not 6000 copies."""
    text = "".join(f"ValueError: bad value {i}\n" for i in range(6_000))
    errs = [e for s in rankerror.streams(text) for e in rankerror.errors(s)]
    assert len(errs) == 6_000
    assert all("context" not in e.__dict__ for e in errs)  # nothing cut yet
    assert "bad value 5998" in errs[-1].context


_WORDS = sorted({u for _, p in PATTERNS[:80] for u in pieces(p)} | {"\n", "\r", "\r\n", "\x1b[2J", "\x00"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_WORDS), max_size=400), st.integers(min_value=1, max_value=40))
def test_any_mix_of_the_words_explains_without_error_and_in_bounded_words(words, repeat):
    text = "".join(words) * repeat
    found = explain.explain(text)
    if found is not None:
        d = found.to_dict()
        assert len(d["evidence"]) <= 300 and len(d["cause"]) <= 2_000


def test_the_supervisor_reads_past_a_line_that_never_ends(tmp_path):
    """The launcher log is read a chunk per tick; a line with no end is read past, not reread from its start on
    every tick, and the failure line after it is still seen."""
    from dscluster.runs.supervising import watching

    log_path = tmp_path / "launcher.log"
    log_path.write_bytes(b"NET/IB " * 50_000)
    offset, reads = 0, 0
    text, offset = watching.read_new(log_path, offset)
    assert offset == 350_000 and not detect.FAILURE_LINE.search(text)
    with open(log_path, "ab") as f:
        f.write(b"\n['python', 't.py'] exits with return code = 1\n" + b"x" * (3 * watching.READ_CHUNK) + b"\n")
    seen = False
    while True:
        text, new = watching.read_new(log_path, offset)
        reads += 1
        seen = seen or bool(detect.FAILURE_LINE.search(text))
        if new == offset:
            break
        offset = new
    assert seen and offset == log_path.stat().st_size and reads <= 6

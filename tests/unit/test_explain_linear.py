"""Logs are hostile input: reading one costs time in proportion to its size, whatever it holds.

Load-independent measures only (the machine is shared): CPU time of this process (`time.process_time`),
compared between a text and the same text twice as long. Linear work doubles; a pattern that backtracks
over a line (or across lines) grows four-fold or worse. A ratio above 3, on a text whose search costs more
than FLOOR_S at all, fails. The worst lines of each pattern are made of its own words (every literal run
in its source, repeated, with and without separators), so a new signature is checked the day it is added.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dscluster import errorline, explain, launchcmd, logtext, rankerror, signatures
from dscluster.launcher import backends
from dscluster.runs.supervising import detect

FLOOR_S = 0.01  # below this a search of 32 KB is fast whatever its ratio (a quadratic one costs seconds)
SIZE = 16_000


def _patterns() -> list[tuple[str, re.Pattern]]:
    found = [(f"signature {s.name}", s.pattern) for s in signatures.SIGNATURES]
    # The last word's (errorline.py): the OS's error texts and the error line, tried on every line of a log.
    found += [(f"signature {s.name}", s.pattern) for s in (*errorline.OS_SIGNATURES, errorline.ERROR_LINE)]
    for mod in (signatures, explain, logtext, rankerror, launchcmd, detect, errorline):
        found += [(f"{mod.__name__}.{k}", v) for k, v in sorted(vars(mod).items()) if isinstance(v, re.Pattern)]
    # What each launcher backend's launcher prints (launcher/backends), read by detect, rankerror and logtext.
    found.append(("dscluster.runs.supervising.detect.failure_line()", detect.failure_line()))
    found += [(f"backend {name}.{trait}", re.compile(getattr(backends.get(name), trait))) for name in backends.names()
              for trait in ("signal_line", "rank_label") if getattr(backends.get(name), trait)]
    return found


def units(pattern: re.Pattern) -> list[str]:
    """The words a pattern looks for: its literal runs (escapes undone, classes made concrete)."""
    src = re.sub(r"\\([^\w])", r"\1", pattern.pattern)
    src = re.sub(r"\\d", "1", src)
    src = re.sub(r"\\[ws]", "a", src)
    runs = {r for r in re.split(r"[|()?*+{}^$\[\]]", src) if len(r.strip()) >= 2}
    return sorted(runs) + [" ", "\t", "a", "1", "a.", "[rank1]: "]


def worst_texts(pattern: re.Pattern, size: int):
    for unit in units(pattern):
        for sep in ("", " ", "\n"):
            word = unit + sep
            yield word * max(1, size // len(word))


def cost(fn, text: str, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


def grows_linearly(fn, text: str) -> tuple[bool, float, float]:
    """Whether fn's CPU time on text doubled stays within 3x of its time on text (min of 3 runs once it looks
    worse, so one busy moment does not fail it)."""
    small, big = cost(fn, text), cost(fn, text + text)
    if big < FLOOR_S or big < 3 * small:
        return True, small, big
    small, big = cost(fn, text, 3), cost(fn, text + text, 3)
    return big < FLOOR_S or big < 3 * small, small, big


@pytest.mark.parametrize("name,pattern", _patterns(), ids=[n for n, _ in _patterns()])
def test_every_pattern_is_linear_on_the_worst_lines_of_its_own_words(name, pattern):
    for text in worst_texts(pattern, SIZE):
        ok, small, big = grows_linearly(pattern.search, text)
        assert ok, f"{name}: {small:.3f}s on {len(text)} chars, {big:.3f}s on twice that ({text[:40]!r}...)"


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


@pytest.mark.parametrize("kind", sorted(WORST_LOGS))
def test_explain_time_grows_linearly_with_the_log_whatever_it_holds(kind):
    ok, small, big = grows_linearly(explain.explain, WORST_LOGS[kind])
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


_WORDS = sorted({u for _, p in _patterns()[:80] for u in units(p)} | {"\n", "\r", "\r\n", "\x1b[2J", "\x00"})


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

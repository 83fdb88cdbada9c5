"""benchmarks/run.py: every benchmark script is in a named suite (or a named helper), and the entry point
lists the suites and prints a suite's commands as it would run them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def load():
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_every_script_is_in_a_suite_and_every_suite_runs_scripts_that_exist():
    run = load()
    assert set(run.SUITES) == {"throughput", "checkpoint", "kernels", "launch", "scale"}
    in_suites = {c[0] for s in run.SUITES.values() for c in s.commands}
    assert all((BENCH / name).is_file() for name in in_suites | set(run.HELPERS))
    scripts = {p.name for p in BENCH.glob("*.py")}
    assert scripts - in_suites - set(run.HELPERS) == set(), "a benchmark outside every suite"


def test_list_and_dry_run(capsys):
    run = load()
    assert run.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in run.SUITES) and "benchmarks/checkpoint_pause.py" in listed
    assert run.main(["launch", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "demo_phases.py" in out and "launch_overhead.py --nodes 3" in out and "exit" not in out


def test_the_gpu_session_script_is_a_tool_not_a_lab_notebook():
    """benchmarks/h200_session.sh keeps the phases a user runs; the recorded calls live in raw/h200_calls.sh."""
    import re

    text = (BENCH / "h200_session.sh").read_text()
    phases = set(re.findall(r"(?m)^  ([a-z0-9-]+)\)", text))
    assert phases == {"smoke", "suite", "cases", "demo", "tests", "fa4-stash"}, phases
    record = (BENCH / "raw" / "h200_calls.sh").read_text()
    assert {"s7", "s20", "lanes"} <= set(re.findall(r"(?m)^  ([a-z0-9-]+)\)", record))

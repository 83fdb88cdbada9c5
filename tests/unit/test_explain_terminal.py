"""Terminal control sequences from logs or run records never reach the terminal raw: `explain FILE`,
`explain RUN` and `status` print them escaped (logtext.printable, the views' one sanitiser)."""

from __future__ import annotations

import re

from dscluster import cli, logtext
from dscluster.runs.records import store

# Clear the screen, set the window title, move the cursor up and rewrite the line, a C1 CSI, a bidi override.
HOSTILE = "\x1b[2J\x1b]0;owned\x07\x1b[1A\rok \x9b31m\u202eexe.txt"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_printable_escapes_every_control_and_keeps_the_words():
    shown = logtext.printable(f"ValueError: bad {HOSTILE}\n\tnext line")
    assert not RAW.search(shown)
    assert "\\x1b[2J" in shown and "\\r" in shown and "\\x9b" in shown and "\\u202e" in shown
    assert shown.endswith("\n\tnext line")  # newline and tab are text
    assert logtext.printable("a\nb", one_line=True) == "a\\nb"
    assert logtext.printable("步驟 1 損失 3.2 ✗") == "步驟 1 損失 3.2 ✗"


def test_explain_prints_a_logs_control_sequences_escaped(tmp_path, capsys):
    log = tmp_path / "train_rank0.log"
    log.write_text(f"Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in <module>\n"
                   f"ValueError: bad {HOSTILE}\n")
    assert cli.main(["explain", str(log)]) == 0
    out = capsys.readouterr().out
    assert "ValueError: bad \\x1b[2J" in out and not RAW.search(out), out


def test_status_and_explain_of_a_run_print_its_record_escaped(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared"
    monkeypatch.setenv("DSCLUSTER_SHARED", str(shared))
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path / "home"))
    run_dir = store.run_path(shared, "bad-1")
    run_dir.mkdir(parents=True)
    exp = {"signature": "python-error", "cause": f"c {HOSTILE}", "fix": f"f {HOSTILE}", "retry": False,
           "evidence": f"seen {HOSTILE}", "error": {"type": "ValueError", "summary": f"ValueError: {HOSTILE}",
                                                    "who": "rank 0", "rank": 0}}
    store.write_record(run_dir, store.RunRecord.from_json(
        {"id": "bad-1", "status": "failed", "launch": {"program": "t.py", "launcher": "local"}, "explanation": exp}))
    for argv in (["status", "bad-1"], ["explain", "bad-1"]):
        cli.main(argv)
        out = capsys.readouterr().out
        assert "\\x1b]0;owned" in out and not RAW.search(out), (argv, out)

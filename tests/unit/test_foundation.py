import json
import os
import subprocess
import sys

import pytest

from dscluster import cli, fsutil
from dscluster.cluster.runner import LocalRunner, run_parallel
from dscluster.errors import ConfigError, ExitCode
from dscluster.i18n import tr


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert "dscluster 0.1.0" in capsys.readouterr().out


def test_unknown_verb_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-verb"])
    assert exc.value.code == ExitCode.USAGE
    assert "--help" in capsys.readouterr().err


def test_typed_error_shows_message_and_fix_without_traceback(monkeypatch, capsys, dscluster_home):
    def boom(args):
        raise ConfigError("train_batch_size is 7", "set it to 8", setting="train_batch_size")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=boom)
    rc = cli.main([])
    err = capsys.readouterr().err
    assert rc == ExitCode.CONFIG
    assert "train_batch_size is 7" in err and "set it to 8" in err
    assert "Traceback" not in err


def test_zh_tw_catalog(monkeypatch):
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    assert tr("fix") == "解法"
    monkeypatch.setenv("DSCLUSTER_LANG", "en")
    assert tr("fix") == "fix"


def test_atomic_write_and_jsonl(tmp_path):
    p = tmp_path / "a" / "state.json"
    fsutil.atomic_write_json(p, {"x": 1})
    assert json.loads(p.read_text()) == {"x": 1}
    assert not [f for f in p.parent.iterdir() if f.name.endswith(".tmp")]
    log = tmp_path / "m.jsonl"
    fsutil.append_jsonl(log, {"step": 1})
    with open(log, "a") as f:
        f.write('{"step": 2')  # a writer caught mid-line
    records, offset = fsutil.read_jsonl(log)
    assert records == [{"step": 1}]
    more, _ = fsutil.read_jsonl(log, offset)
    assert more == []


def test_local_runner_and_parallel_order():
    r = LocalRunner()
    assert r.run(["echo", "hi"]).check().stdout.strip() == "hi"
    slow = r.run([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.5)
    assert slow.timed_out and not slow.ok
    assert run_parallel(lambda x: x * 2, [3, 1, 2]) == [6, 2, 4]


def test_console_script_installed():
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "dscluster"), "--help"],
                         capture_output=True, text=True, check=True)
    assert "dscluster" in out.stdout


def test_unexpected_error_is_short_and_logged(monkeypatch, capsys, dscluster_home):
    def bug(args):
        raise RuntimeError("something internal")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=bug)
    rc = cli.main([])
    err = capsys.readouterr().err
    assert rc == ExitCode.FAILURE
    assert "something internal" in err and "Traceback" not in err
    assert "Traceback" in (dscluster_home / "logs" / "dscluster.log").read_text()


def test_broken_pipe_is_quiet():
    dscluster = os.path.join(os.path.dirname(sys.executable), "dscluster")
    proc = subprocess.run(f"{dscluster} --help | head -1", shell=True, capture_output=True, text=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr


def test_unknown_option_points_at_the_verbs_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["doctor", "--no-such-option"])
    assert exc.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "--no-such-option" in err and "dscluster doctor --help" in err


def test_zh_tw_domain_files_agree():
    """The catalog merges every domain file (the backends' own too): one English template must have one
    translation."""
    from dscluster.i18n import domain_files

    seen: dict[str, tuple[str, str]] = {}
    entries = domain_files("zh_TW")
    assert {"cli.json", "mpich.json"} <= {e.name for e in entries}
    for entry in entries:
        for key, text in json.loads(entry.read_text(encoding="utf-8")).items():
            if key in seen:
                assert seen[key][1] == text, f"{key!r}: {seen[key][0]} says {seen[key][1]!r}, {entry.name} says {text!r}"
            seen[key] = (entry.name, text)


@pytest.mark.parametrize("argv", [["--debug", "config", "show", "--cluster", "/nonexistent"],
                                  ["config", "show", "--cluster", "/nonexistent", "--debug"]])
def test_debug_before_or_after_the_verb_shows_the_traceback(argv, capsys, dscluster_home):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == ExitCode.CONFIG
    assert "Traceback" in err and "/nonexistent" in err


def test_without_debug_no_traceback(capsys, dscluster_home):
    rc = cli.main(["config", "show", "--cluster", "/nonexistent"])
    err = capsys.readouterr().err
    assert rc == ExitCode.CONFIG and "Traceback" not in err and "/nonexistent" in err


def test_nested_verb_usage_error_names_the_nested_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["data", "prepare", "--no-such-option"])
    assert "dscluster data prepare --help" in capsys.readouterr().err


def test_next_steps_header_is_translated(monkeypatch):
    from dscluster.console import next_steps

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    assert "接下來" in next_steps("dscluster doctor")


def test_no_false_log_path_when_home_is_unwritable(monkeypatch, capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("DSCLUSTER_HOME", str(blocker / "home"))  # under a regular file: cannot be created
    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=lambda args: 1 / 0)
    assert cli.main([]) == ExitCode.FAILURE
    err = capsys.readouterr().err
    assert "ZeroDivisionError" in err and "traceback written" not in err


def test_next_steps_name_this_venv_when_it_is_not_on_path(monkeypatch):
    from dscluster.console import next_steps

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    text = next_steps("dscluster runs", "python -m dscluster.train --help", "ls -l")
    bindir = os.path.dirname(sys.executable)
    assert f"{bindir}/dscluster runs" in text
    assert f"{sys.executable} -m dscluster.train --help" in text
    assert "  ls -l" in text
    monkeypatch.setenv("PATH", bindir + ":/usr/bin:/bin")
    assert "  dscluster runs" in next_steps("dscluster runs")

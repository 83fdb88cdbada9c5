"""The CLI's one error boundary (cli.main) and an OSError from the environment: a folder another user owns,
a full disk, a missing file. The person gets the path, the fix and a stable exit code (ExitCode.PERMISSION),
in their language, with no traceback unless --debug; a bug that happens to be an OSError with no path (a
refused connection) stays an unexpected error."""

from __future__ import annotations

import errno

import pytest

from dscluster import cli
from dscluster.errors import ExitCode


def _main_raising(monkeypatch, exc: BaseException, argv: list[str] | None = None) -> int:
    def verb(args):
        raise exc

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=verb)
    return cli.main(argv or [])


@pytest.mark.parametrize(("exc", "said", "fix"), [
    (PermissionError(errno.EACCES, "Permission denied", "/srv/shared/runs"),
     "may not use /srv/shared/runs", "ls -ld /srv/shared/runs"),
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "/srv/shared/data/x.bin"),
     "/srv/shared/data/x.bin does not exist", "check the path"),
    (OSError(errno.ENOSPC, "No space left on device", "/srv/shared/runs/r1/ckpt"),
     "no space left where /srv/shared/runs/r1/ckpt is written", "free space there"),
    (OSError(errno.ENOSPC, "No space left on device"), "no space left on a device", "df -h"),
])
def test_an_os_error_names_the_path_and_the_fix_without_a_traceback(monkeypatch, capsys, dscluster_home,
                                                                     exc, said, fix):
    monkeypatch.setenv("DSCLUSTER_LANG", "en")
    rc = _main_raising(monkeypatch, exc)
    err = capsys.readouterr().err
    assert rc == ExitCode.PERMISSION, err
    message, fix_line = err.splitlines()[:2]
    assert said in message and fix_line.startswith("  fix: ") and fix in fix_line, err
    assert "Traceback" not in err and "PermissionError" not in err and "Errno" not in err, err


def test_in_traditional_chinese(monkeypatch, capsys, dscluster_home):
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    rc = _main_raising(monkeypatch, PermissionError(errno.EACCES, "Permission denied", "/srv/shared/runs"))
    err = capsys.readouterr().err
    assert rc == ExitCode.PERMISSION
    assert "權限不足" in err and "/srv/shared/runs" in err and "解法" in err, err
    rc = _main_raising(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    assert rc == ExitCode.PERMISSION and "沒有空間" in capsys.readouterr().err


def test_debug_shows_the_traceback(monkeypatch, capsys, dscluster_home):
    rc = _main_raising(monkeypatch, PermissionError(errno.EACCES, "Permission denied", "/srv/x"), ["--debug"])
    err = capsys.readouterr().err
    assert rc == ExitCode.PERMISSION and "Traceback" in err and "/srv/x" in err


def test_an_os_error_without_a_path_is_still_unexpected(monkeypatch, capsys, dscluster_home):
    rc = _main_raising(monkeypatch, ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))
    err = capsys.readouterr().err
    assert rc == ExitCode.FAILURE and "ConnectionRefusedError" in err and "Traceback" not in err

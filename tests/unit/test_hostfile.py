"""Hostfile parsing: DeepSpeed's exact rules (checked against DeepSpeed's own parser) plus stricter checks."""

from __future__ import annotations

import pytest

from dscluster.cluster.hostfile import (
    check_master_first,
    check_resolvable,
    format_hostfile,
    parse_hostfile,
    unresolvable,
)
from dscluster.errors import ExitCode, HostfileError

deepspeed_runner = pytest.importorskip("deepspeed.launcher.runner")

VALID = [
    "node0 slots=8\nnode1 slots=8\n",
    "# comment\n\n  node0 slots=2  \n\tnode1\tslots=1\n",
    "node0 slots=8 # trailing comment\nnode1 slots=4 max_slots=4\n",
    "10.0.0.1 slots=1\r\n10.0.0.2 slots=16\r\n",
    "gpu-01.cluster.local slots=8\n",
]


@pytest.mark.parametrize("text", VALID)
def test_accepts_what_deepspeed_accepts_with_the_same_result(text):
    ours = parse_hostfile(text)
    theirs = list(deepspeed_runner._parse_hostfile(text.splitlines()).items())
    assert ours == theirs


def test_order_is_kept_it_is_the_node_rank_order():
    assert [h for h, _ in parse_hostfile("b slots=1\na slots=2\nc slots=1\n")] == ["b", "a", "c"]


# (text, line, words in the message, words in the fix)
BAD = [
    ("a slots = 8", 1, ["no spaces"], ["a slots=8"]),
    ("a slots =8", 1, ["no spaces"], ["a slots=8"]),
    ("a", 1, ["no slots"], ["a slots=N"]),
    ("a:8", 1, ["not hostfile syntax"], ["a slots=8"]),
    ("a slots=eight", 1, ["whole number"], ["a slots=N"]),
    ("a slots=-1", 1, ["whole number"], []),
    ("ok slots=1\na slots=0", 2, ["slots=0", "no rank"], ["slots=1 or more"]),
    ("root@a slots=1", 1, ["user name"], ["a", "ssh_user"]),
    ("a slots=1\nb slots=1\na slots=2", 3, ["twice", "lines 1 and 3"], ["one line per host"]),
    ("a slots=8 gpus=2", 1, ["gpus=2", "silently ignore"], ["max_slots"]),
    ("a gpus=8", 1, ["not a hostfile entry"], ["HOST slots=N"]),
]


@pytest.mark.parametrize("text,line,words,fix_words", BAD)
def test_bad_lines_name_the_line_and_the_fix(text, line, words, fix_words):
    with pytest.raises(HostfileError) as exc:
        parse_hostfile(text, path="hosts")
    err = exc.value
    assert err.line == line and err.message.startswith(f"hosts:{line}: ")
    assert err.exit_code == ExitCode.CONFIG and err.setting == "hostfile"
    for w in words:
        assert w in err.message, (w, err.message)
    assert err.hint
    for w in fix_words:
        assert w in err.hint, (w, err.hint)


@pytest.mark.parametrize("text", ["", "# only a comment\n\n", "   \n"])
def test_empty_hostfile(text):
    with pytest.raises(HostfileError, match="no host lines") as exc:
        parse_hostfile(text, path="hosts")
    assert "node0 slots=8" in exc.value.hint
    with pytest.raises(ValueError):  # DeepSpeed agrees
        deepspeed_runner._parse_hostfile(text.splitlines())


def test_stricter_cases_deepspeed_would_accept():
    # slots=0, user@host and trailing junk pass DeepSpeed's parser: we reject them on purpose.
    for text in ("a slots=0", "root@a slots=1", "a slots=8 gpus=2"):
        deepspeed_runner._parse_hostfile([text])
        with pytest.raises(HostfileError):
            parse_hostfile(text)


def test_format_round_trips():
    entries = [("node0", 2), ("node1", 1)]
    assert format_hostfile(entries) == "node0 slots=2\nnode1 slots=1\n"
    assert parse_hostfile(format_hostfile(entries)) == entries


def test_master_must_be_first():
    entries = [("node1", 1), ("node0", 1)]
    check_master_first([("node0", 1), ("node1", 1)], ["node0", "10.0.0.10"])
    with pytest.raises(HostfileError) as exc:
        check_master_first(entries, ["node0", "10.0.0.10"], path="hosts")
    assert "first host is node1" in exc.value.message and "node0" in exc.value.hint and "top" in exc.value.hint
    with pytest.raises(HostfileError) as exc:
        check_master_first([("a", 1)], ["node0"])
    assert "add the master" in exc.value.hint


def test_unresolvable_names():
    assert unresolvable(["localhost", "127.0.0.1"]) == []
    bad = "no-such-host-dscluster.invalid"
    assert unresolvable(["localhost", bad], timeout=3) == [bad]
    with pytest.raises(HostfileError, match=bad) as exc:
        check_resolvable([("localhost", 1), (bad, 1)], path="hosts")
    assert "/etc/hosts" in exc.value.hint
    check_resolvable([(bad, 1)], aliases=[bad])  # names the cluster's ssh_config maps are fine

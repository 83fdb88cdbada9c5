"""Session 33: collective-rank-not-in-group (round 186's case): torch's warning that a collective ran on a rank outside
the group it was given, read before the rank's traceback (sigmessages.READS_BEFORE), then the None it left used."""

from __future__ import annotations

from pathlib import Path

from dscluster import explain

LOGS = Path(__file__).resolve().parent.parent / "data" / "explain"


def test_the_recorded_log_names_a_collective_called_outside_its_group():
    exp = explain.explain((LOGS / "collective-rank-not-in-group.log").read_text())
    assert exp.signature == "collective-rank-not-in-group" and exp.retry is False
    assert "not in the group it was given" in exp.cause and "only on its members" in exp.fix


def test_another_op_and_another_use_of_its_none():
    log = ("/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py:2741: UserWarning: Running "
           "broadcast_object_list on global rank 3 which does not belong to the given group.\n"
           "  _warn_not_in_group(\"broadcast_object_list\")\n"
           "Traceback (most recent call last):\n  File \"/w/eval.py\", line 30, in <module>\n"
           "    cfg = objs[0].copy()\nAttributeError: 'NoneType' object has no attribute 'copy'\n")
    assert explain.explain(log).signature == "collective-rank-not-in-group"


def test_near_misses():
    warning = ("UserWarning: Running all_reduce on global rank 1 which does not belong to the given group.\n")
    # The warning, then an error of another kind (no None used): not read as this.
    other = warning + ("Traceback (most recent call last):\n  File \"/w/t.py\", line 9, in <module>\n"
                       "ValueError: sample 17: the caption is empty\n")
    assert explain.explain(other).signature != "collective-rank-not-in-group"
    # A None used with no such warning: the user's own bug, generic.
    plain = ("Traceback (most recent call last):\n  File \"/w/t.py\", line 9, in <module>\n"
             "TypeError: 'NoneType' object is not subscriptable\n")
    assert explain.explain(plain).signature != "collective-rank-not-in-group"
    # torch's new_group refusal of a rank out of range is another error.
    assert explain.explain("ValueError: Rank 4 is out of range for world size 4\n").signature != \
        "collective-rank-not-in-group"

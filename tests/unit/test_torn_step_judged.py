"""A torn `step-N` (its save cut off by the failure: no COMMIT.json) is renamed `step-N.incomplete-K` when the
supervisor judges the attempt's failure (issue #46), not at the next save of that step: until then `ckpt`, a
copy or a person would take it for a checkpoint. Committed steps and anything else in the folder stay."""

from __future__ import annotations

import json
from types import SimpleNamespace

from dscluster.runs.supervising import runbook
from dscluster.train.commits import COMMIT_FILE, committed_steps


def _book(tmp_path, save_dir):
    """The recording part alone, over a record whose ranks save to `save_dir`; its log lines and events noted."""
    record = SimpleNamespace(launch=SimpleNamespace(env={"DSCLUSTER_CHECKPOINT_DIR": str(save_dir)}, args=[],
                                                    cwd=str(tmp_path), node_uid=None), argv=[], cwd=str(tmp_path),
                             ds_config=None)
    book = runbook.RunBook(tmp_path / "run", record)
    book.logged, book.events = [], []
    book.log = book.logged.append
    book.event = lambda name, **kw: book.events.append((name, kw))
    return book


def test_a_torn_step_is_renamed_when_the_failure_is_judged(tmp_path):
    save = tmp_path / "ckpt"
    (save / "step-10").mkdir(parents=True)
    (save / "step-10" / COMMIT_FILE).write_text(json.dumps({"step": 10, "tag": "step-10", "files": {}}))
    (save / "step-20").mkdir()
    (save / "step-20" / "mp_rank_00_model_states.pt").write_bytes(b"half")
    (save / "step-20.incomplete-1").mkdir()  # an earlier torn save of the same step keeps its name
    book = _book(tmp_path, save)

    book.set_aside_torn_steps(2)

    assert sorted(p.name for p in save.iterdir()) == ["step-10", "step-20.incomplete-1", "step-20.incomplete-2"]
    assert (save / "step-20.incomplete-2" / "mp_rank_00_model_states.pt").read_bytes() == b"half"
    assert committed_steps(save) == [10]
    assert book.events == [("checkpoint-torn", {"attempt": 2, "checkpoint": str(save / "step-20"),
                                                "moved_to": str(save / "step-20.incomplete-2")})]


def test_nothing_is_renamed_through_a_planted_link_or_without_a_torn_step(tmp_path):
    real = tmp_path / "elsewhere"
    (real / "step-5").mkdir(parents=True)
    link = tmp_path / "ckpt"
    link.symlink_to(real)
    _book(tmp_path, link).set_aside_torn_steps(1)
    assert (real / "step-5").is_dir()
    book = _book(tmp_path, tmp_path / "absent")
    book.set_aside_torn_steps(1)
    assert book.events == []

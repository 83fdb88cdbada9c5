"""Every known failure signature has a real-looking log under tests/data/explain/<signature>.log."""

from pathlib import Path

import pytest

from dscluster import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


@pytest.mark.parametrize("sig", [s.name for s in explain.SIGNATURES])
def test_each_signature_is_recognised_in_its_log(sig):
    log = DATA / f"{sig}.log"
    assert log.is_file(), f"missing test log for signature {sig}"
    found = explain.explain(log.read_text())
    assert found is not None and found.signature == sig
    assert found.cause and found.fix and found.evidence


def test_root_cause_wins_over_the_symptom_on_other_ranks():
    text = (DATA / "cuda-oom.log").read_text()
    assert "remote process exited" in text  # the symptom is there too
    assert explain.explain(text).signature == "cuda-oom"
    assert explain.explain(text).retry is False


def test_unknown_text_is_not_explained_and_files_pick_the_most_specific(tmp_path):
    assert explain.explain("step 1 loss 3.2\nall good\n") is None
    a, b = tmp_path / "launcher.log", tmp_path / "rank1.log"
    a.write_text((DATA / "gloo-peer-closed.log").read_text())
    b.write_text((DATA / "module-not-found.log").read_text())
    assert explain.explain_files([a, b]).signature == "module-not-found"
    assert explain.explain_files([tmp_path / "missing.log"]) is None


def test_explanation_serialises_for_run_json():
    d = explain.explain((DATA / "address-in-use.log").read_text()).to_dict()
    assert set(d) == {"signature", "cause", "fix", "retry", "evidence"}
    assert d["signature"] == "address-in-use" and d["retry"] is True

"""Corrupt checkpoints on disk, as a disk fault, a full disk or a hand edit leaves them: every reader (`ckpt`,
`ckpt verify`, `ckpt export`, the resume rules a restart follows) names the step and the file, says what is
wrong and what to do, exits non-zero, prints no traceback and changes nothing on disk.

The readers are property-tested against truncated, bit-flipped, empty and wrong-typed COMMIT.json files and
shards (Hypothesis); the named cases of issue #36 are tests of their own."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dscluster.cli import main
from dscluster.errors import DsclusterError
from dscluster.runs.records import store
from dscluster.runs.records.record import RunRecord
from dscluster.train import checkpoint as ck
from dscluster.train.model import GPT, GPTConfig

MODEL = "mp_rank_00_model_states.pt"
CFG = GPTConfig(n_layer=1, n_head=2, d_model=16, vocab_size=50, seq_len=8)


def _run_with_steps(shared: Path, steps=(7, 9)) -> Path:
    """A run directory whose checkpoints/ holds committed ZeRO stage 0 steps, as DeepSpeed lays them out."""
    run_dir = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("faults"), "name": "faults",
                                                            "argv": [], "env": {}, "status": "failed",
                                                            "launch": {"args": [], "hosts": []}}))
    torch.manual_seed(0)
    model = GPT(CFG)
    for step in steps:
        step_dir = run_dir / "checkpoints" / ck.tag_for(step)
        step_dir.mkdir(parents=True)
        torch.save({"module": {k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}, "step": step,
                    "model": dict(CFG.__dict__)}, step_dir / MODEL)
        ck.commit(step_dir.parent, step, {"world_size": 1, "zero_stage": 0})
    return run_dir


def _snapshot(root: Path) -> dict[str, str]:
    """Every file and directory under root with its content's hash: what "nothing changed on disk" compares."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _refused(capsys, root: Path, *argv: str) -> str:
    """Run a ckpt command that must refuse: non-zero, no traceback, nothing on disk changed; what it printed."""
    before = _snapshot(root)
    code, out, err = _cli(capsys, *argv)
    assert code != 0, out + err
    assert "Traceback" not in out + err and "AttributeError" not in out + err, out + err
    assert _snapshot(root) == before
    return out + err


@pytest.fixture
def run_dir(dscluster_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return _run_with_steps(tmp_path / "shared")


def test_a_truncated_commit_is_not_committed_export_refuses_ckpt_lists_it_and_restart_skips_it(run_dir, capsys):
    commit = run_dir / "checkpoints" / "step-9" / ck.COMMIT_FILE
    commit.write_bytes(commit.read_bytes()[:40])  # the disk filled up (or failed) while it was written
    err = _refused(capsys, run_dir.parent, "ckpt", "export", run_dir.name, "--step", "9")
    assert "step-9 is not committed: COMMIT.json is unreadable" in err and str(commit) in err, err
    assert "step-7" in err  # what to do: the committed step before it
    err = _refused(capsys, run_dir.parent, "ckpt", "verify", run_dir.name, "--step", "9")
    assert "step-9 is not committed" in err
    code, out, _ = _cli(capsys, "ckpt", run_dir.name)
    row = next(line for line in out.splitlines() if "step-9" in line)
    assert code == 0 and "damaged: COMMIT.json is unreadable" in row, out
    # The resume rules a restart follows: step-9 is not a resume point, step-7 is.
    save = run_dir / "checkpoints"
    assert ck.committed_steps(save) == [7] and ck.resume_env(save)[ck.RESUME_STEP_ENV] == "7"
    assert ck.resolve_resume(save, "auto") == 7
    # The next save of step 9 sets the torn one aside (never deleted, never resumed).
    aside = ck.set_aside_uncommitted(save, 9)
    assert aside is not None and aside.name == "step-9.incomplete-1" and (aside / MODEL).is_file()


def test_the_default_step_skips_a_newest_step_whose_commit_does_not_read_and_says_so(run_dir, capsys, tmp_path):
    (run_dir / "checkpoints" / "step-9" / ck.COMMIT_FILE).write_bytes(b"")
    code, out, err = _cli(capsys, "ckpt", "export", run_dir.name, "--out", str(tmp_path / "m.pt"), "--format",
                          "fp32")
    assert code == 0 and "step-7 exported" in out and "step-9 is not committed (COMMIT.json is unreadable (empty))" \
        in err, out + err


def test_wrong_types_in_commit_json_are_named_not_an_attribute_error(run_dir, capsys):
    commit = run_dir / "checkpoints" / "step-9" / ck.COMMIT_FILE
    data = json.loads(commit.read_text())
    data["files"] = "mp_rank_00_model_states.pt"
    commit.write_text(json.dumps(data))
    err = _refused(capsys, run_dir.parent, "ckpt", "verify", run_dir.name, "--step", "9")
    assert "step-9" in err and 'COMMIT.json is unreadable (its "files" is not a map of file name to size)' in err, err
    err = _refused(capsys, run_dir.parent, "ckpt", "export", run_dir.name, "--step", "9")
    assert "step-9 is damaged" in err and "COMMIT.json" in err, err
    code, out, _ = _cli(capsys, "ckpt", run_dir.name)
    assert code == 0 and '"files" is not a map' in out


def test_a_truncated_shard_is_named_with_its_step(run_dir, capsys):
    shard = run_dir / "checkpoints" / "step-9" / MODEL
    shard.write_bytes(shard.read_bytes()[:1000])
    err = _refused(capsys, run_dir.parent, "ckpt", "export", run_dir.name, "--step", "9")
    assert "step-9 is damaged" in err and f"{MODEL} is 1,000 bytes" in err and "--step" in err, err
    assert "PytorchStreamReader" not in err.splitlines()[0]


def test_a_shard_that_does_not_load_at_its_committed_size_is_named(run_dir, capsys):
    """Same size, other bytes (a bit flip in the zip's directory): the size check passes, torch fails."""
    step_dir = run_dir / "checkpoints" / "step-9"
    data = bytearray((step_dir / MODEL).read_bytes())
    data[-30:] = bytes(30)  # the end of the zip's central directory
    (step_dir / MODEL).write_bytes(bytes(data))
    err = _refused(capsys, run_dir.parent, "ckpt", "export", run_dir.name, "--step", "9", "--format", "fp32")
    assert "step-9 is damaged" in err and f"{MODEL} does not load" in err, err
    assert not list((run_dir / "export").glob("*")) if (run_dir / "export").exists() else True


# ---- properties -------------------------------------------------------------------------------------

def _valid_commit() -> bytes:
    return json.dumps({"step": 9, "tag": "step-9", "time": 1.0, "files": {MODEL: 1234}, "hash": ck.HASH_NAME,
                       "sha256": {MODEL: "0" * 64}, "world_size": 1, "zero_stage": 0}, indent=2).encode()


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                        max_size=3), max_leaves=6)


@st.composite
def damaged_commits(draw) -> bytes:
    good = _valid_commit()
    kind = draw(st.sampled_from(["truncated", "bit-flipped", "empty", "wrong-typed", "garbage"]))
    if kind == "truncated":
        return good[:draw(st.integers(0, len(good) - 1))]
    if kind == "bit-flipped":
        data = bytearray(good)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "empty":
        return draw(st.sampled_from([b"", b" ", b"\n", b"\x00" * 16]))
    if kind == "wrong-typed":
        obj = json.loads(good)
        key = draw(st.sampled_from(["files", "sha256", "world_size", "zero_stage", "step"]))
        obj[key] = draw(_json_values)
        if key == "files" and isinstance(obj[key], dict):
            obj[key] = {**obj[key], MODEL: draw(st.text(max_size=4) | st.floats(allow_nan=False) | st.booleans())}
        return json.dumps(obj).encode()
    return draw(st.binary(max_size=200))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=damaged_commits())
def test_commit_readers_name_the_problem_and_never_raise(tmp_path, raw):
    step_dir = tmp_path / "step-9"
    step_dir.mkdir(exist_ok=True)
    (step_dir / MODEL).write_bytes(b"x" * 1234)
    (step_dir / ck.COMMIT_FILE).write_bytes(raw)
    before = _snapshot(tmp_path)
    problem = ck.commit_problem(step_dir)
    commit = ck.read_commit(step_dir)
    assert (commit is None) == (problem is not None)
    if problem is not None:
        assert problem.startswith("COMMIT.json is")
        assert ck.damage(step_dir) == problem and ck.verify(step_dir) == [problem]
    else:  # a flip that still reads as a well-typed commit: the sizes and hashes are what is checked
        assert isinstance(commit.get("files", {}), dict)
        assert ck.damage(step_dir) is None or isinstance(ck.damage(step_dir), str)
        assert all(isinstance(p, str) for p in ck.verify(step_dir))
    steps = ck.committed_steps(tmp_path)
    assert steps in ([], [9])
    if steps == [] and (step_dir / ck.COMMIT_FILE).exists():
        assert ck.resolve_resume(tmp_path, "auto") is None  # never a resume point
    try:
        ck.resolve_resume(tmp_path, "auto")
    except ck.CheckpointError as err:
        # The step, then a file as COMMIT.json names it (a flipped bit may have renamed it), and the fix.
        assert re.search(r"step-9 is damaged: (COMMIT\.json|\S+ is (missing|[\d,]+ bytes))", err.message), err.message
        assert "mv " in err.hint
    assert _snapshot(tmp_path) == before


@st.composite
def damaged_shards(draw, good: bytes) -> bytes:
    kind = draw(st.sampled_from(["truncated", "bit-flipped", "empty"]))
    if kind == "truncated":
        return good[:draw(st.integers(0, len(good) - 1))]
    if kind == "empty":
        return b""
    data = bytearray(good)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= 1 << draw(st.integers(0, 7))
    return bytes(data)


def test_shard_readers_name_the_step_and_the_file_or_export_what_loads(dscluster_home, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run_dir = _run_with_steps(tmp_path / "shared", steps=(9,))
    shard = run_dir / "checkpoints" / "step-9" / MODEL
    good = shard.read_bytes()
    outs = iter(range(10_000))

    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(raw=damaged_shards(good))
    def check(raw):
        shard.write_bytes(raw)
        before = _snapshot(run_dir.parent)
        out_path = tmp_path / "exports" / f"m{next(outs)}.pt"
        existed = out_path.parent.exists()
        code, out, err = _cli(capsys, "ckpt", "export", run_dir.name, "--step", "9", "--format", "fp32", "--out",
                              str(out_path))
        assert "Traceback" not in out + err, out + err
        if code == 0:  # a flip inside tensor data: torch loads it (content hashes are `verify`'s job)
            assert out_path.is_file()
            out_path.unlink()
        else:
            assert "step-9" in err and MODEL in err, err
            assert not out_path.exists() and out_path.parent.exists() == existed  # nothing made, nothing left
        assert _snapshot(run_dir.parent) == before
        problems = ck.verify(shard.parent) + (ck.load_problems(shard.parent) if raw != good else [])
        assert raw == good or any(MODEL in p for p in problems)

    check()


def test_the_readers_raise_only_dscluster_errors_for_a_step_they_are_asked_to_load(tmp_path):
    step_dir = tmp_path / "step-3"
    step_dir.mkdir()
    (step_dir / ck.COMMIT_FILE).write_text('{"files": {"a.pt": "12"}}')
    with pytest.raises(DsclusterError):
        from dscluster.train.export import export

        export(step_dir, tmp_path / "out.pt", "fp32")
    assert not (tmp_path / "out.pt").exists()


def test_a_step_the_live_runs_retention_removes_during_verify_is_not_called_damaged(run_dir, capsys, monkeypatch):
    """A live run keeps its newest steps: the one `ckpt verify` reads may go meanwhile. That is no damage:
    the newest committed step is verified instead; with --step the removal is said as it is."""
    import shutil

    from dscluster.commands import ckpt as ckpt_cmd
    from dscluster.train import commits

    real = commits.verify
    calls = []

    def retire_first(step_dir):  # retention removes step-9 just as verify reads it; step-7 stays
        calls.append(step_dir.name)
        if step_dir.name == "step-9":
            shutil.rmtree(step_dir)
        return real(step_dir)

    monkeypatch.setattr(commits, "verify", retire_first)  # where `ckpt verify` reads it from
    monkeypatch.setattr(ckpt_cmd, "chosen_step", lambda save_dir, step, run_id: 9 if "step-9" not in calls else 7)
    code, out, err = _cli(capsys, "ckpt", "verify", run_dir.name)
    assert code == 0 and calls == ["step-9", "step-7"] and "step-7:" in out and "damaged" not in out + err, out + err


def test_a_model_states_file_that_loads_without_its_weights_is_named(run_dir, capsys, tmp_path):
    """Found by Hypothesis: one byte changes the pickle's 'module' key; the file still loads. The export names
    the step and the file, not a bare KeyError."""
    shard = run_dir / "checkpoints" / "step-9" / MODEL
    raw = shard.read_bytes()
    assert raw.count(b"module") >= 1
    shard.write_bytes(raw.replace(b"module", b"lodule", 1))
    err = _refused(capsys, run_dir.parent, "ckpt", "export", run_dir.name, "--step", "9", "--format", "fp32",
                   "--out", str(tmp_path / "m.pt"))
    assert "step-9" in err and MODEL in err and "no model weights" in err and "KeyError" not in err, err
    assert not (tmp_path / "m.pt").exists()

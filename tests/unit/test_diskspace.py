"""A full disk, in the parts that need no cluster: the launch pre-flight's room check (both numbers named), the
run's cause as status shows it, the signature in the explainer's table (a real torch.save on a full tmpfs is
tests/cluster/test_faults_sim.py's)."""

from __future__ import annotations

import pytest

from dscluster import explain
from dscluster.errors import ClusterError
from dscluster.runs.preparing import diskspace
from dscluster.train import checkpoint as ck


def _committed(save_dir, step: int, size: int) -> None:
    d = save_dir / ck.tag_for(step)
    d.mkdir(parents=True)
    (d / "mp_rank_00_model_states.pt").write_bytes(b"x" * size)
    ck.commit(save_dir, step, {"world_size": 1, "zero_stage": 0})


def test_the_preflight_refuses_when_the_next_checkpoint_does_not_fit_and_names_both_numbers(tmp_path, monkeypatch):
    save = tmp_path / "ckpt"
    _committed(save, 4, 3 << 20)
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 1 << 20)
    with pytest.raises(ClusterError) as err:
        diskspace.check_room(save)
    assert "1.00 MiB free, the last committed checkpoint took 3.00 MiB" in err.value.message
    assert "--keep" in err.value.hint and "--save-dir" in err.value.hint
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 5 << 20)
    diskspace.check_room(save)  # room enough
    # A first run: the model's estimate, when there is one; nothing known, nothing refused.
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 1 << 20)
    with pytest.raises(ClusterError, match="the model's checkpoint needs about 2.00 MiB"):
        diskspace.check_room(tmp_path / "new" / "checkpoints", 2 << 20)
    diskspace.check_room(tmp_path / "new" / "checkpoints", None)


def test_the_reference_trainers_estimate_grows_with_the_model():
    tiny = diskspace.reference_model_bytes(["--preset", "tiny"])
    big = diskspace.reference_model_bytes(["--preset", "124m", "--steps", "3"])
    assert tiny and big and big > 50 * tiny


def test_the_cause_names_the_path_what_is_free_and_what_the_last_checkpoint_took(tmp_path, monkeypatch):
    save = tmp_path / "ckpt"
    _committed(save, 4, 3 << 20)
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 512 << 10)
    exp = diskspace.explanation(save, "run-1", "OSError: [Errno 28] No space left on device: '/nonexistent/x/y.pt'")
    d = exp.to_dict()
    assert d["signature"] == "disk-full" and d["retry"] is False
    assert d["cause"] == "no space left on device: / (0.50 MiB free; the last checkpoint took 3.00 MiB)"
    assert "dscluster restart run-1" in d["fix"] and "--keep" in d["fix"]
    first = diskspace.explanation(tmp_path / "empty", "run-2").to_dict()
    assert first["cause"].endswith("(0.50 MiB free; no checkpoint was committed yet)")
    assert diskspace.full_disk(save) == save  # under MIN_FREE


def test_the_signature_takes_a_full_disk_before_the_program_error_and_leaves_shm_to_its_own():
    text = ("[rank0]: RuntimeError: [enforce fail at inline_container.cc:603] . PytorchStreamWriter failed writing "
            "file data/12: file write failed\nerror: checkpoint step-4 is incomplete\n  fix: check free space\n")
    assert explain.explain(text).signature == "disk-full"
    assert explain.explain("OSError: [Errno 28] No space left on device: '/dev/shm/x'").signature == "dev-shm-full"


def test_a_nodes_own_disk_is_named_with_the_node_and_no_figure_from_here(tmp_path):
    """A rank on node1 filled its /tmp: the controller's free space there says nothing about node1's."""
    from dscluster.runs.preparing import diskspace

    shared = tmp_path / "shared"
    save = shared / "runs" / "r" / "checkpoints"
    evidence = "OSError: [Errno 28] No space left on device: '/tmp/torch_cache/x.bin'"
    exp = diskspace.explanation(save, "r", evidence, shared=shared, node="node1").to_dict()
    cause, fix = exp["cause"], exp["fix"]
    assert exp["signature"] == "disk-full" and exp["retry"] is False
    assert "/tmp/torch_cache/x.bin on node1" in cause and "MiB free" not in cause, cause
    assert "df -h /tmp/torch_cache/x.bin" in fix and "dscluster restart r" in fix, fix
    # on the shared storage (or a local run's own disk) the figures are measured here
    on_shared = diskspace.explanation(save, "r", evidence.replace("/tmp/torch_cache", str(save)), shared=shared,
                                      node="node1").to_dict()
    assert "MiB free" in on_shared["cause"], on_shared
    local = diskspace.explanation(save, "r", evidence, shared=shared, node="localhost").to_dict()
    assert "MiB free" in local["cause"], local

"""An inline DeepSpeed config (the demo's) is named by its content under <shared>/data/ds_configs, a folder
the node user and every person can write (1777): a file placed there first under the expected name must
never be what a run reads, unless it is exactly the config and ours alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dscluster.runs import service

CONFIG = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}


def _expected(shared: Path) -> Path:
    probe = service.inline_ds_config(shared / "probe", CONFIG, "demo", write=False)
    return shared / service.INLINE_CONFIGS / probe.name


def test_a_config_written_once_is_reused_by_the_next_run(tmp_path):
    first = service.inline_ds_config(tmp_path, CONFIG, "demo")
    assert first == _expected(tmp_path) and json.loads(first.read_text()) == CONFIG
    assert service.inline_ds_config(tmp_path, CONFIG, "demo") == first


def test_a_planted_file_under_the_expected_name_is_never_used(tmp_path):
    planted = _expected(tmp_path)
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}))
    used = service.inline_ds_config(tmp_path, CONFIG, "demo")
    assert used != planted and used.parent == planted.parent
    assert json.loads(used.read_text()) == CONFIG
    assert json.loads(planted.read_text())["zero_optimization"] == {"stage": 3}  # left as it was


def test_the_same_text_writable_by_others_or_behind_a_link_is_not_reused(tmp_path):
    planted = _expected(tmp_path)
    planted.parent.mkdir(parents=True)
    text = json.dumps(CONFIG, indent=2, sort_keys=True) + "\n"
    planted.write_text(text)
    os.chmod(planted, 0o666)  # the right bytes today, anyone's tomorrow
    assert service.inline_ds_config(tmp_path, CONFIG, "demo") != planted
    os.unlink(planted)
    target = tmp_path / "elsewhere.json"
    target.write_text(text)
    planted.symlink_to(target)
    used = service.inline_ds_config(tmp_path, CONFIG, "demo")
    assert used != planted and not used.is_symlink() and json.loads(used.read_text()) == CONFIG

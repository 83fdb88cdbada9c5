"""Where dscluster keeps things: a DSCLUSTER_SHARED that cannot work is refused with its name and fix."""

from __future__ import annotations

import pytest

from dscluster.errors import ConfigError
from dscluster.paths import local_shared


def test_a_shared_directory_setting_that_cannot_work_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("DSCLUSTER_SHARED", str(tmp_path / "missing"))
    assert local_shared() == tmp_path / "missing"  # created when first written
    (tmp_path / "file").write_text("x")
    for value, words in ((str(tmp_path / "file"), "not a directory"), ("relative/dir", "not an absolute path")):
        monkeypatch.setenv("DSCLUSTER_SHARED", value)
        with pytest.raises(ConfigError, match=words) as err:
            local_shared()
        assert err.value.setting == "DSCLUSTER_SHARED" and err.value.hint

"""Files the user wrote (cluster spec, hostfile, ds_config) in another encoding than UTF-8: a ConfigError
naming the file, the offending byte and the fix, never a UnicodeDecodeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from dscluster import dsconfig
from dscluster.cluster.spec import load_spec, spec_from_hostfile
from dscluster.errors import ConfigError


@pytest.mark.parametrize("reader,setting,data", [
    (spec_from_hostfile, "hostfile", b"\xff\xfenode1 slots=1\n"),
    (load_spec, "cluster", b"[cluster]\nname = \"caf\xe9\"\n"),
    (dsconfig.load, "deepspeed_config", b'{"train_micro_batch_size_per_gpu": 1, "x": "\xe9"}'),
])
def test_a_file_that_is_not_utf8_is_named_with_its_byte_and_fix(tmp_path, reader, setting, data):
    path = tmp_path / "file"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as err:
        reader(path)
    assert str(path) in err.value.message and "not UTF-8" in err.value.message
    assert err.value.setting == setting and "iconv" in err.value.hint


@pytest.mark.parametrize("reader", [spec_from_hostfile, load_spec, dsconfig.load])
def test_a_device_or_fifo_is_refused_before_reading_it(tmp_path, reader):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would block; /dev/zero would be read until memory ran out
    for path in (Path("/dev/zero"), fifo):
        with pytest.raises(ConfigError, match="not a regular file"):
            reader(path)


def test_resolving_a_cluster_from_a_device_is_refused():
    from dscluster.cluster.spec import resolve_spec

    with pytest.raises(ConfigError, match="not a regular file"):
        resolve_spec("/dev/zero")

"""`data prepare`: text/jsonl -> shards + meta.json, deterministic split, clear errors; the stdlib corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dscluster.cli import main as cli_main
from dscluster.data import corpus
from dscluster.data.prepare import prepare
from dscluster.data.shards import open_dataset
from dscluster.data.tokenizer import ByteTokenizer
from dscluster.errors import DataError


@pytest.fixture
def sources(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    for i in range(40):
        (src / "pkg" / f"m{i:02d}.py").write_text(f"def f{i}(x):\n    return x * {i}\n")
    (src / "README.md").write_text("# Title\nsome text\n")
    (src / "notes.txt").write_text("plain text ✓\n")
    (src / "skip.bin").write_bytes(b"\x00\x01")
    (src / "docs.jsonl").write_text(json.dumps({"text": "first doc"}) + "\n\n" + json.dumps({"text": "second"}) + "\n")
    return src


def test_prepare_round_trips_every_document(sources, tmp_path):
    out = tmp_path / "out"
    meta = prepare([sources], out, ByteTokenizer(), val_fraction=0.2)
    assert meta["dtype"] == "uint16" and meta["sources"]["files"] == 43
    ds = open_dataset(out)
    text = b"".join(np.asarray(s).astype(np.uint8).tobytes() for s in ds.train.shards + ds.val.shards)
    tokens = np.concatenate([np.asarray(s) for s in ds.train.shards + ds.val.shards])
    assert (tokens == 256).sum() == 44  # one end-of-document per document (43 files, the jsonl holds 2)
    for needle in [b"return x * 7", b"plain text \xe2\x9c\x93", b"first doc", b"second", b"# Title"]:
        assert needle in text
    assert b"\x00\x01" not in text
    assert ds.val.tokens > 0 and meta["splits"]["val"]["documents"] > 0


def test_split_is_deterministic(sources, tmp_path):
    a = prepare([sources], tmp_path / "a", ByteTokenizer())
    b = prepare([sources], tmp_path / "b", ByteTokenizer())
    assert a["splits"] == b["splits"]
    assert (tmp_path / "a" / "train-00000.bin").read_bytes() == (tmp_path / "b" / "train-00000.bin").read_bytes()


def test_small_input_still_gets_validation_tokens(tmp_path):
    f = tmp_path / "one.txt"
    f.write_text("x" * 1000)
    meta = prepare([f], tmp_path / "out", ByteTokenizer())
    assert sum(meta["splits"]["val"]["tokens"]) > 0 and sum(meta["splits"]["train"]["tokens"]) > 900


def test_shards_roll_over(sources, tmp_path):
    meta = prepare([sources], tmp_path / "out", ByteTokenizer(), val_fraction=0.0, shard_tokens=100)
    assert len(meta["splits"]["train"]["files"]) > 3
    assert open_dataset(tmp_path / "out").train.tokens == sum(meta["splits"]["train"]["tokens"])


def test_errors_name_the_setting(sources, tmp_path):
    with pytest.raises(DataError) as err:
        prepare([tmp_path / "missing"], tmp_path / "o", ByteTokenizer())
    assert err.value.setting == "SRC"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "x"}\n')
    with pytest.raises(DataError) as err:
        prepare([bad], tmp_path / "o", ByteTokenizer())
    assert err.value.setting == "--text-field" and "bad.jsonl:1" in err.value.message
    prepare([sources], tmp_path / "o", ByteTokenizer())
    with pytest.raises(DataError, match="already holds"):
        prepare([sources], tmp_path / "o", ByteTokenizer())
    prepare([sources], tmp_path / "o", ByteTokenizer(), force=True)  # --force replaces


def test_out_never_replaces_a_users_files(sources, tmp_path):
    # --out is swapped in as a whole: a folder with the user's own files, or a file (even a source),
    # must be refused with or without --force, and left exactly as it was.
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.txt").write_text("irreplaceable")
    for force in (False, True):
        with pytest.raises(DataError, match="already holds other files") as err:
            prepare([sources], mine, ByteTokenizer(), force=force)
        assert "chapter1.txt" in err.value.message and err.value.setting == "--out"
    assert (mine / "chapter1.txt").read_text() == "irreplaceable"
    source_file = sources / "notes.txt"
    with pytest.raises(DataError, match="is a file, not a directory"):
        prepare([source_file], source_file, ByteTokenizer(), force=True)
    assert source_file.read_text() == "plain text ✓\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "thesis"]  # no partial or .old left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    assert prepare([sources], empty, ByteTokenizer())["splits"]["train"]["files"]  # an empty folder is fine


def test_open_dataset_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist") as err:
        open_dataset(tmp_path / "nope")
    assert err.value.setting == "--data" and "data prepare" in err.value.hint
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no meta.json"):
        open_dataset(tmp_path / "empty")


def test_truncated_shard_is_detected(sources, tmp_path):
    prepare([sources], tmp_path / "o", ByteTokenizer())
    shard = tmp_path / "o" / "train-00000.bin"
    shard.write_bytes(shard.read_bytes()[:-2])
    with pytest.raises(DataError, match="meta.json says"):
        open_dataset(tmp_path / "o")


def test_stdlib_file_list_is_sorted_and_excludes_tests():
    files = corpus.stdlib_files()
    root = corpus.stdlib_root()
    rel = [p.relative_to(root).as_posix() for p in files]
    assert rel == sorted(rel) and len(rel) > 100
    assert "json/decoder.py" in rel and not any(r.startswith(("test/", "idlelib/")) for r in rel)


def test_cli_data_prepare(sources, tmp_path, dscluster_home, capsys):
    out = tmp_path / "cli-out"
    assert cli_main(["data", "prepare", str(sources), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "✓" in text and "train" in text and "Next:" in text
    # the suggested launch works without a cluster spec or a ds_config.json the user does not have
    assert f"dscluster launch --local 2 -m dscluster.train --data {out.resolve()} --deepspeed\n" in text
    assert cli_main(["data", "prepare", str(sources), "--out", str(out)]) == 3  # exists: ConfigError exit code
    assert "--force" in capsys.readouterr().err

"""Generated text through the hostfile, spec and ds_config readers: the contract, for any input.

Each reader either accepts the file, and then what it read is what DeepSpeed itself reads (its own
`launcher.runner._parse_hostfile` for hostfiles and for the hostfile a spec produces; hjson, loaded
as `runtime/config.py` loads it, for ds_configs), or refuses it with a ConfigError that names the
file and carries a fix. Never another exception. dscluster may be stricter than DeepSpeed (it
refuses `slots=0`, `user@host`, trailing words), never looser or different.

Bounded for CI: a fixed number of examples per property, no example database written.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path

import hjson
import pytest
from deepspeed.launcher.runner import _parse_hostfile
from deepspeed.runtime.config_utils import dict_raise_error_on_duplicate_keys
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dscluster import dsconfig
from dscluster.cluster.spec import format_spec, load_spec, parse_spec, spec_from_hostfile
from dscluster.errors import ConfigError

PROPERTY = settings(max_examples=250, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
BOM = "\ufeff"


def _write(data: bytes) -> Path:
    fd, name = tempfile.mkstemp(prefix="dsc-prop-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return Path(name)


def _read(reader, data: bytes):
    """`reader` on a file holding `data`: its result, or None when refused as the contract says (a
    ConfigError naming the file, with a fix). Any other exception fails the property."""
    path = _write(data)
    try:
        result = reader(path)
    except ConfigError as err:
        event("refused")
        assert str(path) in str(err.message) or err.setting in ("cluster", "hostfile"), err.message
        assert err.hint, err.message
        return None
    finally:
        path.unlink()
    event("accepted")
    return result


def _deepspeed_hostfile(text: str):
    """DeepSpeed's reading of a hostfile with this text (fetch_hostfile: text-mode readlines), or None."""
    import io

    try:
        return list(_parse_hostfile(io.StringIO(text, newline=None).readlines()).items())
    except ValueError:
        return None


# ---- hostfiles ------------------------------------------------------------------------------------

_host = st.one_of(st.sampled_from(["node0", "node1", "gpu-01", "10.0.0.7", "h.example.org", "[fe80::1]",
                                   "root@node2", "node:8", "n\u00e9ud", "#x", "slots=1"]),
                  st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                          max_size=8))
_space = st.sampled_from([" ", "  ", "\t", " \t", "\u00a0", "\u3000", ""])
_slots = st.one_of(st.integers(0, 64).map(lambda n: f"slots={n}"),
                   st.sampled_from(["slots = 8", "slots=", "slots=x", "slots=\u0663", "slots=08", "max_slots=2"]))
_tail = st.sampled_from(["", " max_slots=8", "  # rack 3", " extra", "\x0cnode9 slots=1", " slots=2"])
_good_host = st.sampled_from(["node0", "node1", "node2", "gpu-01", "10.0.0.7", "h.example.org", "n\u00e9ud"])
_good_line = st.tuples(_good_host, st.integers(1, 16), st.sampled_from(["", " max_slots=16", "   # rack"])).map(
    lambda t: f"{t[0]} slots={t[1]}{t[2]}")
_line = st.one_of(
    _good_line, _good_line, _good_line,
    st.tuples(_space, _host, _space.filter(bool), _slots, _tail).map("".join),
    st.sampled_from(["", "# comment", "   ", "node0", "node0 8", "\x00"]),
    st.text(max_size=20),
)
_newline = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\x0b", "\u2028"])


@st.composite
def hostfile_texts(draw):
    lines = draw(st.lists(st.tuples(_line, _newline), min_size=0, max_size=4))
    return (BOM if draw(st.booleans()) else "") + "".join(a + b for a, b in lines)


@PROPERTY
@given(hostfile_texts())
def test_a_hostfile_is_read_as_deepspeed_reads_it_or_refused(text):
    spec = _read(spec_from_hostfile, text.encode("utf-8", "surrogatepass"))
    if spec is None:
        return
    ours = [(n.name, n.slots) for n in spec.nodes]
    assert ours == _deepspeed_hostfile(text.removeprefix(BOM)), (text, ours)
    # What dscluster hands DeepSpeed (the spec's hostfile) reads back the same in DeepSpeed too.
    assert _deepspeed_hostfile(spec.hostfile_text()) == ours


@PROPERTY
@given(st.binary(max_size=64))
def test_any_bytes_as_a_hostfile_give_a_result_or_a_config_error(data):
    spec = _read(spec_from_hostfile, data)
    assert spec is None or spec.nodes


# ---- cluster specs -------------------------------------------------------------------------------

def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string (JSON's \ud83d pairs are not TOML)


_toml_value = st.one_of(st.integers(-3, 70000),
                        st.text(st.characters(exclude_categories=("Cs",)), max_size=12).map(_toml_str), st.booleans().map(str).map(str.lower),
                        st.sampled_from(['"/shared"', '"pdsh"', '"openmpi"', "[1]", "{}", '"eth0"', "1.5"]))
_cluster_keys = st.sampled_from(["name", "shared_dir", "ssh_user", "ssh_port", "launcher", "network_interface",
                                 "state_dir", "nmae"])
_node_keys = st.sampled_from(["address", "slots", "name", "ssh_port", "adress"])


@st.composite
def spec_texts(draw):
    """Mostly well-formed specs (so that acceptance is exercised), with a few settings of any value."""
    table = {"shared_dir": '"/shared"'} if draw(st.integers(0, 9)) < 9 else {}
    if draw(st.integers(0, 2)) == 2:
        table.update(draw(st.dictionaries(_cluster_keys, _toml_value, max_size=2)))
    out = (["[cluster]"] if draw(st.integers(0, 9)) < 9 else []) + [f"{k} = {v}" for k, v in table.items()]
    for _ in range(draw(st.sampled_from([1, 2, 3, 1, 2, 0]))):
        node = {}
        if draw(st.integers(0, 9)) < 9:
            node["address"] = _toml_str(draw(st.one_of(_good_host, _good_host, _host)))
        if draw(st.integers(0, 9)) < 9:
            node["slots"] = str(draw(st.integers(1, 10)) if draw(st.integers(0, 5)) < 5 else draw(st.integers(-1, 0)))
        if draw(st.integers(0, 3)) == 3:
            node.update(draw(st.dictionaries(_node_keys, _toml_value, max_size=1)))
        out += ["[[nodes]]"] + [f"{k} = {v}" for k, v in node.items()]
    text = "\n".join(out) + draw(st.sampled_from(["\n", "\r\n", "", "\n", "\n[oops"]))
    return (BOM if draw(st.booleans()) else "") + text


@PROPERTY
@given(spec_texts())
def test_a_spec_is_accepted_with_a_hostfile_deepspeed_reads_the_same_or_refused(text):
    spec = _read(load_spec, text.encode("utf-8", "surrogatepass"))
    if spec is None:
        return
    assert spec.nodes
    assert _deepspeed_hostfile(spec.hostfile_text()) == [(n.name, n.slots) for n in spec.nodes]


@settings(PROPERTY, derandomize=True)  # the same examples on every CI run (4000 random ones passed)
@given(spec_texts(), st.text(st.characters(exclude_categories=("Cs",)), max_size=24), st.booleans())
def test_a_spec_dscluster_writes_reads_back_the_same(text, tail, odd_dir):
    """Every spec the reader accepts, written by format_spec (`init`, `sim up`, `up`, the run record's copy)
    and read again, is the same spec, and writes the same text: with a shared dir holding any characters
    (a newline, quotes, backslashes, control characters) too."""
    spec = _read(load_spec, text.encode("utf-8", "surrogatepass"))
    if spec is None:
        return
    if odd_dir:  # (the reader strips the whitespace around every string: a path it keeps has none)
        spec = replace(spec, shared_dir=Path(str(Path("/" + tail)).strip()))
    written = format_spec(spec)
    back = parse_spec(written)
    assert back == replace(spec, path=None)
    assert format_spec(back) == written


# ---- ds_configs ---------------------------------------------------------------------------------

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.text(max_size=6), children, max_size=3)),
    max_leaves=12)
_edits = st.sampled_from(["comment", "hash", "trailing", "bom", "unquote", "garbage", "dup", "none"])


@st.composite
def ds_config_texts(draw):
    value = draw(st.one_of(st.dictionaries(st.sampled_from(["train_micro_batch_size_per_gpu", "optimizer", "fp16",
                                                            "zero_optimization", "x y", "a"]), _json, max_size=4),
                           _json))
    text = json.dumps(value, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans()))
    for edit in draw(st.lists(_edits, max_size=3)):
        if edit == "comment":
            text = "// a comment\n" + text
        elif edit == "hash":
            text = text.replace("\n", "  # note\n", 1) if "\n" in text else text + "\n# note"
        elif edit == "trailing" and text.endswith("}") and len(text) > 2:
            text = text[:-1] + ",}"
        elif edit == "bom":
            text = BOM + text
        elif edit == "unquote":
            text = text.replace('"a":', "a:", 1)
        elif edit == "garbage":
            i = draw(st.integers(0, len(text)))
            text = text[:i] + draw(st.text(max_size=3)) + text[i:]
        elif edit == "dup" and text.startswith("{") and len(text) > 2:
            text = '{"a": 1, "a": 2, ' + text[1:]
    return text


def _deepspeed_config(path: Path):
    """DeepSpeed 0.19.8's DeepSpeedConfig reading of a path: the dict, or None where it raises."""
    try:
        with open(path) as f:
            return hjson.load(f, object_pairs_hook=dict_raise_error_on_duplicate_keys)
    except (ValueError, UnicodeDecodeError, OverflowError, RecursionError):
        return None


@PROPERTY
@given(ds_config_texts())
def test_a_ds_config_is_read_as_deepspeed_reads_it_or_refused(text):
    data = text.encode("utf-8", "surrogatepass")
    path = _write(data)
    try:
        theirs = _deepspeed_config(path)
    finally:
        path.unlink()
    ours = _read(dsconfig.load, data)
    if ours is None:  # refused: DeepSpeed refuses it too, or would fail on it (not an object; a NUL byte)
        assert theirs is None or not isinstance(theirs, dict) or "\x00" in text, (text, theirs)
        return
    assert ours == theirs, (text, ours, theirs)
    assert json.loads(json.dumps(ours)) == ours  # plain JSON, as recorded in run.json


@PROPERTY
@given(st.binary(max_size=64))
def test_any_bytes_as_a_ds_config_give_a_dict_or_a_config_error(data):
    config = _read(dsconfig.load, data)
    assert config is None or isinstance(config, dict)


@pytest.mark.parametrize("text", ["{\n  // c\n  a: 1,\n}", BOM + '{"a": 1}', "a: 1", ""])
def test_the_strategies_reach_what_deepspeed_accepts_beyond_json(text):
    path = _write(text.encode())
    try:
        assert dsconfig.load(path) == _deepspeed_config(path)
    finally:
        path.unlink()

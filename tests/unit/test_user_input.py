"""Input as users really write it: each case of a new user's 111 tries that dscluster handled wrongly.

ds_configs as DeepSpeed reads them (hjson), one text policy for every user file (BOM, UTF-16, binary,
Latin-1), a repeated --deepspeed_config, run ids the filesystem cannot hold, a directory as the
script, `data prepare` on binary and non-UTF-8 files, the first run's silent op build, zh-TW in run
output, `lab start` as root without the image, and the small ones (plurals, exit 130 vs -15,
`init -o DIR --force`, dry runs that write).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import hjson
import pytest

from dscluster import cli, dsconfig
from dscluster.cluster.spec import load_spec, resolve_spec, spec_from_hostfile
from dscluster.errors import ConfigError, ExitCode, UsageError
from dscluster.runs.preparing import prepare as lp
from dscluster.runs.preparing import program as lprog
from dscluster.runs.preparing.prepare import prepare
from dscluster.runs.records.request import RunRequest

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py")
BOM = b"\xef\xbb\xbf"
HJSON_CONFIG = """// from a published recipe
{
  # micro batch per GPU
  "train_micro_batch_size_per_gpu": 2,
  gradient_accumulation_steps: 1,
  "optimizer": {"type": "Adam", "params": {"lr": 1e-4,},},
}
"""


def _deepspeed_parse(path: Path):
    """DeepSpeed 0.19.8's own reading of a config path (runtime/config.py DeepSpeedConfig)."""
    from deepspeed.runtime.config_utils import dict_raise_error_on_duplicate_keys

    with open(path) as f:
        return hjson.load(f, object_pairs_hook=dict_raise_error_on_duplicate_keys)


# ---- ds_config: what DeepSpeed accepts ------------------------------------------------------------

def test_a_ds_config_with_comments_and_trailing_commas_is_read_as_deepspeed_reads_it(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(HJSON_CONFIG)
    config = dsconfig.load(path)
    assert config == _deepspeed_parse(path)
    assert type(config) is dict and type(config["optimizer"]) is dict  # plain, not hjson's OrderedDict
    assert json.loads(json.dumps(config)) == config


def test_the_resolved_hjson_config_is_recorded_as_plain_json(dscluster_home, tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(HJSON_CONFIG)
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed", "--deepspeed_config", str(path)], local=2,
                                 skip_doctor=True, cwd=str(tmp_path)))
    assert prep.record.to_json()["ds_config"]["train_batch_size"] == 4
    assert json.loads(json.dumps(prep.record.to_json()["ds_config"], allow_nan=False)) == prep.record.to_json()["ds_config"]


@pytest.mark.parametrize("text,words", [
    ('{"train_micro_batch_size_per_gpu": 1, "train_micro_batch_size_per_gpu": 2}', "appears twice"),
    ('{"a": [1, 2', "not a valid DeepSpeed config"),
    ('{"a": 1e999}', "not a valid DeepSpeed config"),
    ("[1, 2]", "must be a JSON object"),
    ('{"a": ' * 3000, "not a valid DeepSpeed config"),
])
def test_a_ds_config_deepspeed_refuses_is_a_config_error_naming_the_file(tmp_path, text, words):
    path = tmp_path / "ds.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        dsconfig.load(path)
    assert words in err.value.message and str(path) in err.value.message and err.value.hint


def test_a_directory_given_as_ds_config_is_named_as_a_directory(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        dsconfig.load(tmp_path)


# ---- one text policy -------------------------------------------------------------------------------

def test_a_bom_is_dropped_by_every_reader(tmp_path, dscluster_home):
    hostfile = tmp_path / "hostfile"
    hostfile.write_bytes(BOM + b"node1 slots=2\nnode2 slots=2\n")
    assert [n.name for n in spec_from_hostfile(hostfile).nodes] == ["node1", "node2"]
    assert [n.name for n in resolve_spec(str(hostfile)).nodes] == ["node1", "node2"]
    spec = tmp_path / "dscluster.toml"
    spec.write_bytes(BOM + f'[cluster]\nname = "c"\nshared_dir = "{tmp_path}"\n[[nodes]]\naddress = "n1"\nslots = 1\n'.encode())
    assert load_spec(spec).nodes[0].address == "n1"
    ds = tmp_path / "ds.json"
    ds.write_bytes(BOM + b'{"train_micro_batch_size_per_gpu": 1}')
    assert dsconfig.load(ds) == {"train_micro_batch_size_per_gpu": 1} == _deepspeed_parse(ds)


def test_config_hostfile_writes_no_bom_back(tmp_path, monkeypatch, capsys, dscluster_home):
    hostfile = tmp_path / "hostfile"
    hostfile.write_bytes(BOM + b"node1 slots=1\n")
    out = tmp_path / "out"
    assert cli.main(["config", "hostfile", "--cluster", str(hostfile), "-o", str(out)]) == 0
    assert out.read_bytes() == b"node1 slots=1\n"


def test_init_hostfile_with_a_bom_is_accepted_and_its_errors_name_hostfile(tmp_path, capsys, dscluster_home):
    hostfile = tmp_path / "hostfile"
    hostfile.write_bytes(BOM + b"node1 slots=2\n")
    out = tmp_path / "spec.toml"
    assert cli.main(["init", "--hostfile", str(hostfile), "--shared", str(tmp_path), "-o", str(out)]) == 0
    assert load_spec(out).nodes[0].address == "node1"
    bad = tmp_path / "bad"
    bad.write_bytes(BOM + b"node1 slots=2\nnode#2 slots=1\n")
    code = cli.main(["init", "--hostfile", str(bad), "--shared", str(tmp_path), "-o", str(tmp_path / "b.toml")])
    err = capsys.readouterr().err
    assert code != 0 and "--node" not in err, err


@pytest.mark.parametrize("data,words", [
    (b"\xff\xfen\x00o\x00d\x00e\x00", "UTF-16"),
    (b"node1 slots=1\n\x00\x01\x02", "binary file"),
    (b"caf\xe9 slots=1\n", "not UTF-8"),
])
def test_other_encodings_are_refused_with_the_conversion(tmp_path, data, words):
    path = tmp_path / "hostfile"
    path.write_bytes(data)
    for reader in (spec_from_hostfile, load_spec, dsconfig.load):
        with pytest.raises(ConfigError) as err:
            reader(path)
        assert words in err.value.message and str(path) in err.value.message and err.value.hint


# ---- a repeated --deepspeed_config ---------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--deepspeed_config", "a.json", "--deepspeed_config", "b.json"],
    ["--deepspeed_config=a.json", "--deepspeed_config", "b.json"],
    ["--deepspeed_config", "a.json", "--deepspeed_conf", "b.json"],  # argparse takes the prefix
    ["--deepscale_config", "a.json", "--deepspeed_config", "a.json"],  # DeepSpeed asserts on both
])
def test_the_ds_config_named_twice_is_refused(args):
    with pytest.raises(UsageError) as err:
        lprog.check_repeated_options(["--deepspeed", *args])
    assert "only the last" in err.value.message and "keep one --deepspeed_config" in err.value.hint


def test_the_ds_config_option_once_or_repeated_identically_is_fine_and_the_last_is_checked():
    lprog.check_repeated_options(["--deepspeed", "--deepspeed_config", "a.json", "--lr", "3"])
    lprog.check_repeated_options(["--deepspeed_config", "a.json", "--deepspeed-config", "a.json"])
    lprog.check_repeated_options(["--deepspeed_config", "a.json", "--", "--deepspeed_config", "b.json"])
    assert lprog.find_ds_config(["--deepspeed_config", "a.json", "--deepspeed_conf=b.json"]) == "b.json"
    with pytest.raises(UsageError, match="has no value"):
        lprog.check_repeated_options(["--deepspeed_config"])


def test_launch_refuses_two_configs_before_validating_either(dscluster_home, tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"train_micro_batch_size_per_gpu": 1}')
    bad.write_text('{"train_micro_batch_size_per_gpu": 0}')
    with pytest.raises(UsageError, match="2 times"):
        prepare(RunRequest.of(command=[SCRIPT, "--deepspeed_config", str(good), "--deepspeed_config", str(bad)],
                              local=1, skip_doctor=True, cwd=str(tmp_path)))


# ---- run ids the filesystem cannot hold -----------------------------------------------------------

LONG = "r" * 300


@pytest.mark.parametrize("verb", ["status", "logs", "stop", "ckpt", "restart"])
@pytest.mark.parametrize("ref,words", [(LONG, "300 bytes long"), ("a b", "contains ' '"), (".x", "starts with '.'"),
                                       ("a/" * 3000, "a path is at most")])
def test_cli_run_commands_name_a_run_id_that_cannot_exist(verb, ref, words, capsys, dscluster_home):
    assert cli.main([verb, ref]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert words in err and "Errno" not in err and "fix:" in err, err


def test_api_and_http_use_the_same_run_id_check(dscluster_home):
    import dscluster
    from dscluster.jupyter import rundata

    with pytest.raises(UsageError, match="300 bytes long"):
        dscluster.Run(LONG)
    with pytest.raises(UsageError, match="300 bytes long"):
        rundata.find_run([dscluster_home / "runs"], LONG)  # what every /runs/<id> handler calls
    with pytest.raises(UsageError, match="contains"):
        rundata.find_run([dscluster_home / "runs"], "a\x00b")


# ---- a directory as the training script ----------------------------------------------------------

def test_a_directory_given_as_the_script_is_named_a_directory(dscluster_home, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__main__.py").write_text("")
    with pytest.raises(ConfigError) as err:
        prepare(RunRequest.of(command=["pkg"], local=1, skip_doctor=True, cwd=str(tmp_path)))
    assert "is a directory" in err.value.message and "-m pkg" in err.value.hint


# ---- data prepare: binary and non-UTF-8 files ---------------------------------------------------

def test_data_prepare_skips_binary_files_with_a_count(tmp_path, capsys, dscluster_home):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        (src / f"t{i}.txt").write_text(f"plain text number {i}\n" * 20)
    (src / "image.txt").write_bytes(bytes(range(256)) * 20)
    out = tmp_path / "out"
    assert cli.main(["data", "prepare", str(src), "--out", str(out)]) == 0
    assert "skipped 1 binary file" in capsys.readouterr().out
    meta = json.loads((out / "meta.json").read_text())
    assert meta["sources"]["skipped_binary"] == 1
    assert sum(sum(s["tokens"]) for s in meta["splits"].values()) < 4 * 21 * 20 + 10  # no byte of image.txt


def test_data_prepare_refuses_non_utf8_text_naming_every_file_and_writes_nothing(tmp_path, dscluster_home, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.txt").write_text("fine\n")
    (src / "a.txt").write_bytes(b"caf\xe9\n")
    (src / "b.jsonl").write_bytes(b'{"text": "na\xefve"}\n')
    out = tmp_path / "out"
    assert cli.main(["data", "prepare", str(src), "--out", str(out)]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    assert "2 source files are not UTF-8" in err and "a.txt" in err and "b.jsonl" in err and "iconv" in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


# ---- the first run's op build --------------------------------------------------------------------

def test_ops_a_config_needs():
    from dscluster.launcher.ops import ops_needed

    def builders(config, accel="cpu"):
        return [n.builder for n in ops_needed(config, accel)]

    assert builders({"optimizer": {"type": "Adam"}}) == ["FusedAdamBuilder", "ShareMemCommBuilder"]
    assert builders({"optimizer": {"type": "AdamW"}}, "cuda") == ["FusedAdamBuilder"]
    assert builders({"optimizer": {"type": "adam", "params": {"torch_adam": True}}}) == []
    assert builders({"optimizer": {"type": "Adam"}, "zero_optimization": {
        "stage": 2, "offload_optimizer": {"device": "cpu"}}}, "cuda") == ["CPUAdamBuilder"]
    assert builders({"optimizer": {"type": "Lamb"}}, "cuda") == ["FusedLambBuilder"]
    assert builders({"train_micro_batch_size_per_gpu": 1}) == []  # the script brings its own optimizer


def test_a_launch_whose_ranks_will_compile_says_what_how_long_and_how_to_prebuild(dscluster_home, tmp_path,
                                                                                   monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))  # an empty cache: nothing built
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Adam", "params": {"lr": 1e-3}}}')
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed_config", str(cfg)], local=1, skip_doctor=True,
                                 cwd=str(tmp_path)))
    builds = prep.record.to_json()["first_run_builds"]
    assert builds["ops"][0] == "fused_adam" and builds["accelerator"] == "cpu"
    notice = lp.first_run_notice(prep.record)
    assert "fused_adam" in notice and "90 s" in notice and "dscluster node build-ops" in notice
    assert not (tmp_path / "ext").exists()  # looking wrote nothing
    for name in builds["ops"]:  # once built, nothing to announce
        (tmp_path / "ext" / name).mkdir(parents=True)
        (tmp_path / "ext" / name / f"{name}.so").write_bytes(b"")
    prep = prepare(RunRequest.of(command=[SCRIPT, "--deepspeed_config", str(cfg)], local=1, skip_doctor=True,
                                 cwd=str(tmp_path)))
    assert prep.record.to_json()["first_run_builds"] is None and lp.first_run_notice(prep.record) is None


def test_build_ops_sends_the_node_only_what_decides_its_ops():
    from dscluster.launcher.ops import build_argv

    argv = build_argv("/venv/bin/python", {"train_batch_size": 8, "optimizer": {"type": "Lion"}})
    assert argv[:3] == ["/venv/bin/python", "-m", "dscluster.launcher.ops"]
    assert json.loads(argv[3]) == {"optimizer": {"type": "Lion"}}
    assert json.loads(build_argv("p", None)[3]) == {"optimizer": {"type": "Adam"}}  # the recipe's


# ---- run output in zh-TW; exit 130 and -15 -------------------------------------------------------

def _stopped_run(shared: Path) -> Path:
    from dscluster.runs.records import store

    record = {"id": "t-20260101-000000-abcd", "name": "t", "world_size": 1, "cluster": "local",
              "status": "stopped", "exit_code": 130,
              "attempts": [{"n": 1, "started": "2026-01-01T00:00:00+00:00", "ended": "2026-01-01T00:01:00+00:00",
                            "exit_code": 3, "rank_exit_code": 3, "reason": "exit 3 on node1"},
                           {"n": 2, "started": "2026-01-01T00:02:00+00:00", "ended": "2026-01-01T00:03:00+00:00",
                            "exit_code": -15, "reason": "stopped"}]}
    from dscluster.runs.records.record import RunRecord

    return store.create_run(shared, RunRecord.from_json(record))


def test_status_and_outcome_are_all_zh_tw(dscluster_home, tmp_path, capsys, monkeypatch):
    from dscluster.commands.runview import print_outcome
    from dscluster.runs.records import store

    run_dir = _stopped_run(tmp_path / "shared")
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    assert cli.main(["status", "t-2026"]) == 0
    print_outcome(store.read_record(run_dir))
    out = capsys.readouterr().out
    for word in ("succeeded", "stopped", "attempt", "exit", "step"):
        assert word not in out, (word, out)
    assert "已停止" in out and "嘗試" in out and "SIGTERM" in out


def test_a_stopped_run_explains_its_130_and_names_the_attempts_signal(dscluster_home, tmp_path, capsys):
    _stopped_run(tmp_path / "shared")
    assert cli.main(["status", "t-2026"]) == 0
    out = capsys.readouterr().out
    assert "exit 130, as for Ctrl-C" in out and "ended by SIGTERM" in out and "exit -15" not in out
    assert "exit 3  on node1" in out and "exit 3 on node1" not in out  # the code once, then where


def test_counts_are_singular_for_one(tmp_path, capsys, dscluster_home):
    assert cli.main(["init", "--node", "n1", "--shared", str(tmp_path), "-o", str(tmp_path / "s.toml")]) == 0
    out = capsys.readouterr().out
    assert "1 node," in out and "1 slot," in out and "1 nodes" not in out


# ---- lab start as root; init -o DIR; dry runs -----------------------------------------------------

def test_lab_as_root_fix_applies_without_the_image():
    from dscluster.node.lab import root_refusal_fix

    fix = root_refusal_fix("no-such-user-xyz")
    assert "image" not in fix and ("runuser -u USER" in fix or "pip install --user" in fix)
    assert "runuser -u root" in root_refusal_fix("root")  # where the node user exists, use it


def test_init_to_a_directory_fails_before_creating_the_identity(tmp_path, capsys, dscluster_home):
    target = tmp_path / "dir"
    target.mkdir()
    code = cli.main(["init", "--node", "n1", "--shared", str(tmp_path), "-o", str(target), "--force", "--name", "x"])
    assert code == ExitCode.USAGE and "is a directory" in capsys.readouterr().err
    assert not (dscluster_home / "clusters" / "x").exists()


def test_a_dry_run_writes_no_state(tmp_path, capsys, dscluster_home):
    spec = tmp_path / "c.toml"
    spec.write_text(f'[cluster]\nname = "dry"\nshared_dir = "{tmp_path}"\n[[nodes]]\naddress = "127.0.0.1"\nslots = 1\n')
    argv = ["launch", "--cluster", str(spec), "--skip-doctor", "--dry-run", SCRIPT]
    assert cli.main(argv) == ExitCode.CONFIG  # no identity yet: said, and no empty state dir left
    assert not (dscluster_home / "clusters").exists()
    assert cli.main(["init", "--node", "127.0.0.1", "--shared", str(tmp_path), "--name", "dry",
                     "-o", str(spec), "--force"]) == 0
    before = sorted(p.relative_to(dscluster_home) for p in dscluster_home.rglob("*") if "logs" not in p.parts)
    assert cli.main(argv) == 0
    after = sorted(p.relative_to(dscluster_home) for p in dscluster_home.rglob("*") if "logs" not in p.parts)
    assert after == before and not (tmp_path / "runs").exists()
    assert os.environ.get("DSCLUSTER_HOME") == str(dscluster_home)


def test_inline_config_from_the_panel_or_api_is_read_as_deepspeed_reads_files():
    from dscluster.jupyter.launching import _load_config

    assert _load_config("\ufeff{a: 1, // from a recipe\n}") == ({"a": 1}, None)
    with pytest.raises(ConfigError) as err:
        _load_config('{"train_batch_size": ')
    assert err.value.setting == "config" and "trailing commas" in err.value.hint

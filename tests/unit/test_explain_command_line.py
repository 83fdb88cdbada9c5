"""The command line a launcher printed is read for causes that sit in it (launchcmd.py): a CR from a CRLF
script, --local_rank before the script's own positional argument, a DeepSpeed config that is not JSON."""

from __future__ import annotations

from dscluster import cli, explain

SPAWNED = "[2026-12-01 10:00:00,000] [INFO] [launch.py:256:main] process 7 spawned with command: {argv}\n"
RUNNER = "[2026-12-01 10:00:00,000] [INFO] [runner.py:568:main] cmd = {cmd}\n"
TB = "Traceback (most recent call last):\n  File \"/w/train.py\", line 9, in <module>\n{exc}\n"


def test_a_carriage_return_in_the_spawned_command():
    log = SPAWNED.format(argv=['python3', '-u', 'train.py', '--local_rank=0', '--deepspeed_config', 'ds.json\r']) + \
        TB.format(exc="FileNotFoundError: [Errno 2] No such file or directory: 'ds.json\\r'")
    found = explain.explain(log)
    assert found.signature == "crlf-script" and found.retry is False
    assert "ds.json\\r" in found.to_dict()["cause"] and "dos2unix" in found.fix


def test_a_carriage_return_in_the_runners_cmd_line_and_bashs_word_for_it():
    cmd = "/usr/bin/python3 -u -m deepspeed.launcher.launch --world_info=e30= --master_port=29500 train.py --epochs 3\r"
    log = RUNNER.format(cmd=cmd) + TB.format(exc="ValueError: invalid literal for int() with base 10: '3\\r'")
    assert explain.explain(log).signature == "crlf-script"
    bash = explain.explain("run.sh: line 4: $'\\r': command not found\n")  # the table's shell-continuation says it too
    assert bash.signature in ("crlf-script", "shell-continuation") and "dos2unix" in bash.fix
    # A log saved with CRLF line ends is not a CR in the arguments.
    crlf_log = (RUNNER.format(cmd=cmd.rstrip("\r")) + TB.format(exc="KeyError: 'x'")).replace("\n", "\r\n")
    assert explain.explain(crlf_log).signature == "python-error"


def test_local_rank_before_the_scripts_own_positional_argument():
    log = SPAWNED.format(argv=['python3', '-u', 'run_clm.py', '--local_rank=1', 'args.json']) + \
        "usage: run_clm.py [-h] --model_name_or_path MODEL_NAME_OR_PATH --output_dir OUTPUT_DIR\n" \
        "run_clm.py: error: the following arguments are required: --model_name_or_path, --output_dir\n"
    found = explain.explain(log)
    assert found.signature == "local-rank-positional", found
    assert found.params == {"flag": "--local_rank=1", "arg": "args.json"}
    # With its options only, the same failure is the script's usage error.
    plain = log.replace("'--local_rank=1', 'args.json'", "'--local_rank=1', '--lr', '3'")
    assert explain.explain(plain).signature == "argparse-usage"


def test_a_yaml_deepspeed_config(tmp_path, capsys):
    log = SPAWNED.format(argv=['python3', '-u', 'train.py', '--local_rank=0', '--deepspeed_config', 'ds.yaml']) + \
        TB.format(exc="json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)")
    path = tmp_path / "out.log"
    path.write_text(log)
    assert cli.main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "ds.yaml is not a JSON file" in out and "restart can help: no" in out
    # A JSON config that fails to parse is not this.
    assert explain.explain(log.replace("ds.yaml", "ds.json")).signature != "ds-config-not-json"

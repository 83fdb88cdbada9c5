"""Round 25's rules (issue 45), Hugging Face's training stack in its own words (sighf.py, signatures.py): the Trainer
refusing a model loaded before ZeRO-3 was in effect, accelerate's launcher given several machines but no rank for this
one, and accelerate's own refusal of a port in use: a second wording of each, in another version's or another caller's
words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sighf import HF_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # TRL's SFTTrainer under accelerate launch, each rank's line prefixed (the case was PEFT's bare ValueError)
    ("[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/transformers/trainer.py\", line 472, in __init__\n"
     "[rank1]:     raise ValueError(\n"
     "[rank1]: ValueError: Model was not initialized with `Zero-3` despite being configured for DeepSpeed Zero-3. "
     "Please re-initialize your model via `Model.from_pretrained(...)` or `Model.from_config(...)` after creating "
     "your `TrainingArguments`!\n", "zero3-not-initialized"),
    # transformers' own test of the check, the message's opening words only
    ("ValueError: Model was not initialized with `Zero-3` despite being configured.\n", "zero3-not-initialized"),
    # accelerate's port check, which converts the same rank (Python 3.11: caret line, "a real number")
    ("  File \"/usr/local/lib/python3.11/dist-packages/accelerate/utils/launch.py\", line 187, in prepare_multi_gpu_env\n"
     "    need_port_check = num_machines <= 1 or int(args.machine_rank) == 0\n"
     "                                           ^^^^^^^^^^^^^^^^^^^^^^\n"
     "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'\n",
     "accelerate-config"),
    # accelerate's port refusal with the port in backticks and the doubled dashes of some releases
    ("    raise ConnectionError(\n"
     "ConnectionError: Tried to launch distributed communication on port `29500`, but another process is utilizing "
     "it. Please specify a different port (such as using the `----main_process_port` flag or specifying a different "
     "`main_process_port` in your config file) and rerun your script. To automatically use the next open port (on a "
     "single node), you can set this to `0`.\n", "address-in-use"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the Trainer's log line when ZeRO-3 is on, and its other ZeRO-3 refusal (a device_map, not a missed init)
    ("[INFO|modeling_utils.py:1341] Detected DeepSpeed ZeRO-3: activating zero.init() for this model\n",
     "zero3-not-initialized"),
    ("ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing a `device_map`.\n",
     "zero3-not-initialized"),
    # another argument of accelerate's launch that is None, and a NoneType in int() from the script itself
    ("    args.num_processes = int(args.num_processes)\n"
     "TypeError: int() argument must be a string, a bytes-like object or a number, not 'NoneType'\n",
     "accelerate-config"),
    ("    rank = int(os.environ.get('RANK'))\n"
     "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'\n",
     "accelerate-config"),
    # a peer refusing the connection is not a port in use
    ("ConnectionRefusedError: [Errno 111] Connection refused\n", "address-in-use"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("RuntimeError: Address already in use\n") == "address-in-use"
    assert sig("ValueError: Less than two GPU ids were configured and tried to run on on multiple GPUs.\n") == \
        "accelerate-config"
    zh = FAILURES_ZH
    for s in HF_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    port = explain.explain("ConnectionError: Tried to launch distributed communication on port 29401, but another "
                           "process is utilizing it.\n")
    assert port.signature == "address-in-use" and port.retry
    rank = explain.explain("  File \"/opt/venv/lib/python3.10/site-packages/accelerate/utils/launch.py\", line 114, in "
                           "prepare_multi_gpu_env\n"
                           "    setattr(args, \"node_rank\", int(args.machine_rank))\n"
                           "TypeError: int() argument must be a string, a bytes-like object or a number, not "
                           "'NoneType'\n")
    assert "--machine_rank" in rank.fix

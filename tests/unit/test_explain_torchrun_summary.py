"""Session 27 (issue 45): torchrun's summary (`ChildFailedError` ... `Root Cause (first observed failure)`), the shape
users post most, often alone, read as what it is: the launcher's report that rank R on host H exited with code C, not
the rank's own error (src/dscluster/torchrunsummary.py). The layouts are those of
torch/distributed/elastic/multiprocessing/errors/__init__.py (ChildFailedError.format_msg, _FAILURE_FORMAT_TEMPLATE,
ProcessFailure's message): torch 1.9-1.10 (`Root Cause:` then `Other Failures:`, `msg: "Process failed with exitcode
C"`), 1.11-2.9 (`Failures:` then `Root Cause (first observed failure):`, `host`, `traceback : To enable traceback see:
...`), and a rank whose entry point is decorated with @record (its traceback in the `traceback :` field)."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain, rankerror, torchrunsummary
from dscluster.i18n import tr

TORCHRUN_TB = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 269, in launch_agent\n'
    "    raise ChildFailedError(\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n")

# torch 2.x (1.11 and later): ChildFailedError.format_msg with its border of "=" and sections of "-"
SUMMARY_2X = (
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "  <NO_OTHER_FAILURES>\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2025-05-21_15:43:03\n"
    "  host      : gpu01\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : {code} (pid: 14750)\n"
    "  error_file: <N/A>\n"
    "  traceback : {message}\n"
    "============================================================\n")
TO_ENABLE = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"

# torch 1.9-1.10: `*` border, `=` sections, the root cause first, no host, msg in quotes
SUMMARY_19 = (
    "***************************************\n"
    "            train.py FAILED            \n"
    "=======================================\n"
    "Root Cause:\n"
    "[0]:\n"
    "  time: 2021-11-02_08:14:05\n"
    "  rank: 1 (local_rank: 1)\n"
    "  exitcode: 1 (pid: 4242)\n"
    "  error_file: <N/A>\n"
    '  msg: "Process failed with exitcode 1"\n'
    "=======================================\n"
    "Other Failures:\n"
    "[1]:\n"
    "  time: 2021-11-02_08:14:05\n"
    "  rank: 0 (local_rank: 0)\n"
    "  exitcode: 1 (pid: 4241)\n"
    "  error_file: <N/A>\n"
    '  msg: "Process failed with exitcode 1"\n'
    "***************************************\n")

# torch 2.x with other ranks listed under `Failures:`
SUMMARY_OTHERS = (
    "============================================================\n"
    "pretrain.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2024-03-02_10:14:13\n"
    "  host      : node-a\n"
    "  rank      : 5 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 20418)\n"
    "  error_file: <N/A>\n"
    f"  traceback : {TO_ENABLE}\n"
    "[2]:\n"
    "  time      : 2024-03-02_10:14:13\n"
    "  host      : node-a\n"
    "  rank      : 6 (local_rank: 2)\n"
    "  exitcode  : 1 (pid: 20419)\n"
    "  error_file: <N/A>\n"
    f"  traceback : {TO_ENABLE}\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2024-03-02_10:14:12\n"
    "  host      : node-a\n"
    "  rank      : 4 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 20417)\n"
    "  error_file: <N/A>\n"
    f"  traceback : {TO_ENABLE}\n"
    "============================================================\n")

# A rank decorated with @record: ErrorHandler wrote its traceback to error_file, the summary shows it indented
RECORDED = (
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "  <NO_OTHER_FAILURES>\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2024-12-05_10:22:13\n"
    "  host      : gpu01\n"
    "  rank      : 2 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 12345)\n"
    "  error_file: /tmp/torchelastic_a1b2/none_c3d4/attempt_0/0/error.json\n"
    "  traceback : Traceback (most recent call last):\n"
    '    File "/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, '
    "in wrapper\n"
    "      return f(*args, **kwargs)\n"
    '    File "/work/train.py", line 41, in main\n'
    "      cfg = load(args.config)\n"
    "  KeyError: 'lr'\n"
    "  \n"
    "============================================================\n")


def _summary(code: int = 1, message: str = TO_ENABLE) -> str:
    return SUMMARY_2X.format(code=code, message=message)


@pytest.mark.parametrize("text", [
    TORCHRUN_TB + _summary(),  # torch 2.x, as posted with torchrun's own traceback
    _summary(),  # the summary alone
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" + _summary(),
    TORCHRUN_TB + SUMMARY_19,  # torch 1.9-1.10
    # behind the agent's own line for the failed rank (api.py, _poll), torch 2.5's glog prefix
    "E0217 16:43:29.165000 355419 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
    "local_rank: 0 (pid: 14750) of binary: /usr/bin/python3.11\n" + TORCHRUN_TB + _summary(),
    _summary(code=2),  # argparse's exit code
])
def test_the_summary_alone_is_the_launchers_report(text):
    found = explain.explain(text)
    assert found.signature == "torchrun-exit"
    assert found.retry is False
    assert "torchrun-exit" in explain.GENERIC  # it names no cause
    assert "=====" not in (found.error_line or "") and "*****" not in (found.error_line or "")
    assert "exited with code" in found.error_line and "(torchrun's summary)" in found.error_line


def test_first_error_names_the_rank_host_and_code():
    found = explain.explain(TORCHRUN_TB + _summary())
    assert found.error_line == "rank 0 on gpu01: exited with code 1 (torchrun's summary)"
    cause = found.cause.format(**found.params)
    assert "rank 0 on gpu01 exited with code 1" in cause and "does not show" in cause
    fix = found.fix.format(**found.params)
    assert "above torchrun's summary" in fix and "@record" in fix and "--log-dir" in fix and "--redirects" in fix
    assert explain.error_line(found.to_dict()["error"]) == "rank 0 on gpu01: exited with code 1 (torchrun's summary)"


def test_torch_19_layout_names_the_root_cause_and_the_others():
    found = explain.explain(TORCHRUN_TB + SUMMARY_19)
    assert found.error["rank"] == 1 and "node" not in found.error
    assert found.params["others"] == "0"
    assert "rank 1 exited with code 1" in found.cause.format(**found.params)


def test_failures_section_lists_the_other_ranks():
    found = explain.explain(TORCHRUN_TB + SUMMARY_OTHERS)
    assert (found.error["rank"], found.error["node"]) == (4, "node-a")
    assert found.params["others"] == "5, 6"
    fails = [(f.root, f.rank, f.code) for st in rankerror.streams(SUMMARY_OTHERS) for f in torchrunsummary.failures(st)]
    assert fails == [(False, 5, 1), (False, 6, 1), (True, 4, 1)]


def test_an_error_file_path_is_named():
    text = _summary().replace("error_file: <N/A>", "error_file: /tmp/torchelastic_x/none_y/attempt_0/0/error.json")
    found = explain.explain(text)
    assert found.signature == "torchrun-exit"
    assert "/tmp/torchelastic_x/none_y/attempt_0/0/error.json" in found.fix.format(**found.params)


def test_a_recorded_traceback_in_the_summary_is_the_ranks_own_error():
    found = explain.explain(TORCHRUN_TB + RECORDED)
    assert found.signature == "python-error" and found.error["type"] == "KeyError"
    assert (found.error["rank"], found.error["node"]) == (2, "gpu01")
    assert found.retry is False


def test_the_ranks_traceback_above_the_summary_stays_the_answer():
    text = ("Traceback (most recent call last):\n"
            '  File "/work/train.py", line 12, in <module>\n'
            "    main()\n"
            "RuntimeError: CUDA error: invalid device ordinal\n" + TORCHRUN_TB + _summary())
    assert sig(text) == "invalid-device-ordinal"
    text = ("Traceback (most recent call last):\n"
            '  File "/work/train.py", line 8, in main\n'
            '    raise ValueError("batch size must divide")\n'
            "ValueError: batch size must divide\n" + TORCHRUN_TB + _summary())
    found = explain.explain(text)
    assert found.signature == "python-error" and found.error["type"] == "ValueError"


@pytest.mark.parametrize("code,message,expected", [
    (-9, "Signal 9 (SIGKILL) received by PID 14750", "killed"),  # round 54: signals stay read as signals
    (-11, "Signal 11 (SIGSEGV) received by PID 14750", "segfault"),
    (-6, "Signal 6 (SIGABRT) received by PID 14750", "aborted"),
])
def test_signals_stay_signals(code, message, expected):
    assert sig(TORCHRUN_TB + _summary(code, message)) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a rank's own words before the summary (an NCCL WARN line): not the summary's generic answer
    ("gpu01:1234:1290 [0] NCCL WARN NET/Socket : peer 10.0.0.2<44213> shut down while reading\n" + _summary(),
     "torchrun-exit"),
    # the fields without torchrun's section headers (another tool's report of a child's exit)
    ("[0]:\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 12)\n", "torchrun-exit"),
    # another component's exit code (opendatalab/MinerU#3131)
    ("Child process unexpectedly failed with exitcode=9. pid=211\n", "torchrun-exit"),
    # torchrun's teardown line alone
    ("W0217 16:43:26.140000 355419 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 355718 "
     "closing signal SIGTERM\n", "torchrun-exit"),
    # pytest's summary: a `FAILED` title and `=====` borders, no torchrun entry
    ("=========================== short test summary info ============================\n"
     "FAILED tests/test_x.py::test_y - AssertionError: 1 != 2\n"
     "========================= 1 failed, 3 passed in 0.52s ==========================\n", "torchrun-exit"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_flattened_paste_keeps_its_answer():
    # amvur#2 (a corpus case): its lines run together, `exitcode: -9` and SIGKILL in the traceback field
    text = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nx.py FAILED\nFailures:\n"
            "<NO OTHER FAILURES>\nRoot Cause (first observed failure) :\n[0]:\ntime\nhost\n2023-09-14 01:45:50\nnode\n"
            "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n"
            "traceback : signal 9 (SIGKILL) received by PID 36071\n")
    assert sig(text) == "killed"


def test_texts_have_zh_tw():
    texts = set()
    for text in (_summary(), TORCHRUN_TB + SUMMARY_19, SUMMARY_OTHERS,
                 _summary().replace("error_file: <N/A>", "error_file: /tmp/e.json"), _summary().replace("  host      : gpu01\n", "")):
        found = explain.explain(text)
        texts |= {found.cause, found.fix}
    assert len(texts) == 6
    for text in texts:
        assert text in FAILURES_ZH, text
    found = explain.explain(_summary())
    assert tr(found.cause, **found.params) == found.cause.format(**found.params)  # English unless asked


def test_invalid_device_ordinal_speaks_of_both_launchers():
    found = explain.explain("RuntimeError: CUDA error: invalid device ordinal\n")
    assert "--nproc_per_node" in found.cause and "slots=N" in found.cause and "CUDA_VISIBLE_DEVICES" in found.cause
    assert "--nproc_per_node" in found.fix and "slots=N" in found.fix


def test_its_explain_log():
    from pathlib import Path
    log = Path(__file__).resolve().parents[1] / "data" / "explain" / "torchrun-exit.log"
    found = explain.explain(log.read_text())
    assert found.signature == "torchrun-exit" and found.cause and found.fix and found.evidence


def test_a_signal_in_either_layout_is_the_first_failures_death_with_its_rank_and_host():
    """One reader of the summary for signals too (torchrunsummary.signals): torch 1.9-1.10's `Root Cause:` with its
    `msg: "Signal 9 (SIGKILL) ..."` names the rank as 1.11+'s layout does; the others' teardown (SIGTERM) is not read."""
    old = ("Root Cause:\n[0]:\n  time: 2021-11-02_08:14:05\n  rank: 1 (local_rank: 1)\n  exitcode: -9 (pid: 4242)\n"
           '  error_file: <N/A>\n  msg: "Signal 9 (SIGKILL) received by PID 4242"\n=======================================\n'
           "Other Failures:\n[1]:\n  time: 2021-11-02_08:14:06\n  rank: 0 (local_rank: 0)\n  exitcode: -15 (pid: 4241)\n"
           '  error_file: <N/A>\n  msg: "Signal 15 (SIGTERM) received by PID 4241"\n')
    new = ("Root Cause (first observed failure):\n[0]:\n  time      : 2024-03-02_10:00:05\n  host      : gpu7\n"
           "  rank      : 5 (local_rank: 1)\n  exitcode  : -11 (pid: 77)\n  error_file: <N/A>\n"
           "  traceback : Signal 11 (SIGSEGV) received by PID 77\n")
    for text, rank, node, name in ((old, 1, None, "SIGKILL"), (new, 5, "gpu7", "SIGSEGV")):
        found = [e for st in rankerror.streams(text) for e in torchrunsummary.rank_errors(st)]
        assert [(e.kind, e.type, e.rank, e.node) for e in found] == [("signal", name, rank, node)]
        assert explain.explain(text).signature == {"SIGKILL": "killed", "SIGSEGV": "segfault"}[name]

"""Round 54's rule (issue 45), from failed multi-GPU launches that end in torchrun's summary (sigwords.py,
rankerror.py): torchrun's own line for the first rank that failed, `failed (exitcode: -N) local_rank: L (pid: P) of
binary: B` (torch/distributed/elastic/multiprocessing/api.py, SubprocessContext._poll; `... of fn: F (start_method: S)`
from MultiprocessContext._poll), read like DeepSpeed's `exits with return code = -N`: a negative exit code is the
signal that ended the rank (-9 SIGKILL, -11 SIGSEGV, -6 SIGABRT, -7 SIGBUS). The round's case posted that one line
alone (self-rag#83, whose host memory ran out); a kill stays generic: the line does not say who killed it. Second
wordings from other torch versions and threads than the case, and near misses that must not be read as a signal."""

import pytest
from explain_rounds import sig

from dscluster import explain, rankerror


@pytest.mark.parametrize("text,expected", [
    # torch 1.x's logging format (OceannTwT/ra-isf#11, the title; the case had torch 2.x's `[ERROR]` prefix)
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 5343) of binary: "
     "/root/miniconda3/bin/python\n", "killed"),
    # torch 2.5's glog-style prefix (lmzpai/roboMamba#10)
    ("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: "
     "-9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python\n", "killed"),
    # the same message for a function started by start_processes (MultiprocessContext._poll's format string)
    ("failed (exitcode: -9) local_rank: 0 (pid: 4521) of fn: main (start_method: spawn)\n", "killed"),
    # SIGSEGV (FlagOpen/FlagEmbedding#1549)
    ("E1119 08:26:02.715000 28705 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: "
     "-11) local_rank: 0 (pid: 28773) of binary: /app/anaconda3/envs/py312/bin/python3.12\n", "segfault"),
    # SIGABRT (modelscope/ms-swift#9191)
    ("E0423 19:07:14.848000 24 site-packages/torch/distributed/elastic/multiprocessing/api.py:984] failed (exitcode: "
     "-6) local_rank: 1 (pid: 92) of binary: /usr/local/bin/python3\n", "aborted"),
    # SIGBUS, read as DeepSpeed's `exits with return code = -7` is (yanqiangmiffy/InstructGLM#26)
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 37386) of binary: "
     "/home/jovyan/.conda/envs/glm/bin/python\n", "dev-shm-full"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


def test_the_line_names_the_signal_as_the_ranks_error():
    text = ("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
            "(exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python\n")
    found = [e for st in rankerror.streams(text) for e in rankerror.launcher_exits(st)]
    assert [(e.kind, e.type) for e in found] == [("signal", "SIGKILL")]
    assert explain.explain(text).error["type"] == "SIGKILL"


@pytest.mark.parametrize("text,not_expected", [
    # a positive exit code is the rank's own exit (its traceback stands above), not a signal (dhcode-cpp/X-R1#23)
    ("E0217 16:43:29.165000 355419 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
     "local_rank: 1 (pid: 355716) of binary: /usr/bin/python3.11\n", "killed"),
    # argparse's exit code 2 (AtlasAnalyticsLab/Vim4Path#2)
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 44587) of binary: "
     "/usr/bin/python\n", "killed"),
    # another component's exit code 9 (opendatalab/MinerU#3131: SGLang's child process), not torchrun's -9
    ("Child process unexpectedly failed with exitcode=9. pid=211\n", "killed"),
    # torchrun's teardown of the other ranks after one failed, not a kill of the failed one
    ("W0217 16:43:26.140000 355419 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 355718 "
     "closing signal SIGTERM\n", "killed"),
    # an issue title quoting the agent's line without its `local_rank` and binary: not the whole line
    # (hiyouga/LlamaFactory#767)
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) 这个错误是因为什么\n", "dev-shm-full"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_positive_exit_is_no_signal():
    text = ("E0217 16:43:29.165000 355419 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
            "local_rank: 1 (pid: 355716) of binary: /usr/bin/python3.11\n")
    assert not [e for st in rankerror.streams(text) for e in rankerror.launcher_exits(st)]

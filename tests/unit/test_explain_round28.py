"""Round 28's rules (issue 45), from the Chinese-language threads of model repositories (sigmodels.py, sigmessages.py):
Python 3.11's dataclasses refusing a default that code written for 3.10 gives, a process killed while transformers
loads a checkpoint's shards, and accelerate's own refusal of RTX 3090/4000-series cards without NCCL's P2P and IB
turned off: a second wording of each, in another version's or another caller's words than the corpus case it was
written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigmodels import MODEL_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # CPython 3.12's traceback of another class's instance as a default, each rank's line prefixed by torchrun
    ("[rank0]:   File \"/usr/lib/python3.12/dataclasses.py\", line 852, in _get_field\n"
     "[rank0]:     raise ValueError(f'mutable default {type(f.default)} for field '\n"
     "[rank0]: ValueError: mutable default <class 'configs.LoraConfig'> for field lora is not allowed: use "
     "default_factory\n", "python-too-new"),
    # a class without a module prefix (a dataclass defined in __main__ is shown with it; a local one's name alone)
    ("ValueError: mutable default <class 'DataArguments'> for field data_args is not allowed: use default_factory\n",
     "python-too-new"),
    # torchrun reporting the SIGKILL on the progress bar's line (the case was the shell's "Killed")
    ("Loading checkpoint shards:  57% 4/7 [00:40<00:29,  9.96s/it]ERROR:torch.distributed.elastic.multiprocessing.api:"
     "failed (exitcode: -9) local_rank: 0 (pid: 31631) of binary: /usr/bin/python3\n", "memcg-oom"),
    # the shell's "Killed" after a tqdm bar in its ASCII form, at the first shard
    ("Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]Killed\n", "memcg-oom"),
    # accelerate's refusal in the releases that name the 4000 series only, in a rank's prefixed traceback
    ("[rank1]: NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or "
     "IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate launch` which will do "
     "this automatically.\n", "p2p-unsupported"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a list, dict or set default is refused on every Python: the code's own mistake, not a newer Python
    ("ValueError: mutable default <class 'list'> for field target_modules is not allowed: use default_factory\n",
     "python-too-new"),
    ("ValueError: mutable default <class 'dict'> for field kwargs is not allowed: use default_factory\n",
     "python-too-new"),
    # the shards all loaded, and a kill later in training; a shard bar with no kill on its line
    ("Loading checkpoint shards: 100%|██████████| 2/2 [00:05<00:00,  2.61s/it]\n"
     "  3%|▎         | 12/400 [00:31<16:40,  2.58s/it]Killed\n", "memcg-oom"),
    ("Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.20s/it]\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 812)\n",
     "memcg-oom"),
    # accelerate's other launch-time refusals, and the cards named in a log line without a refusal
    ("ValueError: Less than two GPU ids were configured and tried to run on on multiple GPUs.\n", "p2p-unsupported"),
    ("INFO: Detected RTX 4090, NCCL_P2P_DISABLE=1 set by accelerate launch\n", "p2p-unsupported"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("[2023-05-01 10:00:00] exits with return code = -9\n") == "killed"
    assert sig("Memory cgroup out of memory: Killed process 4242 (python)\n") == "memcg-oom"
    assert sig("RuntimeError: CUDA error: peer access is not supported between these two devices\n") == \
        "p2p-unsupported"
    zh = FAILURES_ZH
    for s in MODEL_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    assert explain.explain("Loading checkpoint shards:  50%|#####     | 4/8 [02:10<02:22, 35.73s/it]Killed\n").retry \
        is False

"""Round 43's rule (issue 45), from distributed training started from notebooks and interactive sessions
(sigtraining.py): CPython's multiprocessing refusing to start a process while a spawned child is still importing the
main script (spawn-main-guard): a second wording of it, in another version's or another caller's words than the corpus
case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigtraining import TRAINING_SIGNATURES


@pytest.mark.parametrize("text", [
    # CPython 3.8 on Windows, a DataLoader with workers in a script without the guard (the case was vLLM's workers,
    # each line prefixed by [rank0]:)
    ("  File \"C:\\Python38\\lib\\multiprocessing\\spawn.py\", line 134, in _check_not_importing_main\n"
     "    raise RuntimeError('''\n"
     "RuntimeError:\n"
     "        An attempt has been made to start a new process before the\n"
     "        current process has finished its bootstrapping phase.\n\n"
     "        This probably means that you are not using fork to start your\n"
     "        child processes and you have forgotten to use the proper idiom\n"
     "        in the main module:\n"),
    # CPython 3.12's wording (it adds where to read about it), lines prefixed by a worker's pid
    ("(pid=4242) RuntimeError: \n"
     "(pid=4242)         An attempt has been made to start a new process before the\n"
     "(pid=4242)         current process has finished its bootstrapping phase.\n"
     "(pid=4242)         To fix this issue, refer to the \"Safe importing of main module\"\n"
     "(pid=4242)         section in https://docs.python.org/3/library/multiprocessing.html\n"),
    # the message on one line, as a logger or a title quotes it
    ("ERROR 2024-07-01 10:00:00 RuntimeError: An attempt has been made to start a new process before the current "
     "process has finished its bootstrapping phase. This probably means that you are not using fork\n"),
])
def test_a_second_wording_of_the_rule(text):
    found = explain.explain(text)
    assert found is not None and found.signature == "spawn-main-guard" and found.retry is False


@pytest.mark.parametrize("text", [
    # another program's bootstrap: a cluster's, not a Python process importing its main module
    "INFO waiting for the etcd cluster to finish its bootstrapping phase (3/5 members joined)\n",
    # multiprocessing's other refusal: the start method set twice, not a child re-running the script
    "RuntimeError: context has already been set\n",
    # the idiom alone, in the script a user posted
    "if __name__ == '__main__':\n    freeze_support()\n    main()\n",
    # a spawned child that cannot find a notebook's function: the notebook rule, not this one
    "AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>\n",
])
def test_near_misses(text):
    assert sig(text) != "spawn-main-guard"


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>\n") == \
        "notebook-spawn-main"
    assert sig("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
               "must use the 'spawn' start method\n") == "cuda-fork"
    new = [s for s in TRAINING_SIGNATURES if s.name == "spawn-main-guard"]
    assert len(new) == 1
    for s in new:
        assert s.cause in FAILURES_ZH and s.fix in FAILURES_ZH and s.retry is False, s.name

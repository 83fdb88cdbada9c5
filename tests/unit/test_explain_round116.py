"""Round 116's rules (issue 45), from Chinese-language threads on multi-GPU training launched with accelerate, torchrun
and DeepSpeed: the word python given to a launcher where the training script belongs (CPython's "can't open file
'python'", launcher-given-python-as-script, sigsetup.py), and torchrun's --nproc_per_node that is no number, most often
an empty launch-script argument (torch/distributed/run.py's "Unsupported nproc_per_node value", nproc-per-node-invalid,
sigsetup.py). A second wording of each, in another version's or caller's words than the corpus case it was written
from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

from dscluster import explain

NEW = ("launcher-given-python-as-script", "nproc-per-node-invalid")


@pytest.mark.parametrize("text,expected", [
    # UCloud UAI-Train's FAQ (常见问题 2): the platform adds /usr/bin/python itself, and a job whose command also starts
    # with python gets this, Python 2's and 3.8's form (the path as given)
    ("/usr/bin/python: can't open file 'python': [Errno 2] No such file or directory\n",
     "launcher-given-python-as-script"),
    # CPython 3.9 and later make the script's path absolute before this message (config run_filename), the form
    # torchrun and accelerate launch print now
    ("/opt/conda/bin/python3.11: can't open file '/workspace/LLaMA-Factory/python': [Errno 2] No such file or "
     "directory\nE1203 10:12:44.512000 140221 torch/distributed/elastic/multiprocessing/api.py:869] failed "
     "(exitcode: 2) local_rank: 0 (pid: 140290) of binary: /opt/conda/bin/python3.11\n",
     "launcher-given-python-as-script"),
    # torch 2.x's run.py (`raise ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}") from e`, the frame laid
    # out as that source is; the line number is illustrative) given a
    # list of GPU ids where the count belongs
    ("  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py\", line 733, in "
     "determine_local_world_size\n    raise ValueError(\nValueError: Unsupported nproc_per_node value: 0,1,2,3\n",
     "nproc-per-node-invalid"),
    # a project's notes quoting the error for an empty $NGPUS_PER_JOB (the value as repr, '')
    ("### Problem 3 — `ValueError: Unsupported nproc_per_node value: ''`\n", "nproc-per-node-invalid"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # huggingface/diffusers#6055: accelerate launch of a misspelt script (CPython 3.11 on Windows, the absolute path):
    # a script that is not there, not the word python
    ("can't open file 'D:\\\\Work\\\\diffusers\\\\examples\\\\dreambooth\\\\train_dream_booth.py': [Errno 2] No such "
     "file or directory\nCommand '['C:\\\\Users\\\\admin\\\\scoop\\\\apps\\\\python\\\\current\\\\python.exe', "
     "'train_dream_booth.py']' returned non-zero exit status 2.\n", "launcher-given-python-as-script"),
    # a script whose name holds the word python
    ("/usr/bin/python3: can't open file '/home/user/train_python.py': [Errno 2] No such file or directory\n",
     "launcher-given-python-as-script"),
    # CPython's subprocess (_execute_child) when no program named python is on PATH: the interpreter itself missing
    ("FileNotFoundError: [Errno 2] No such file or directory: 'python'\n", "launcher-given-python-as-script"),
    # torch/distributed/run.py's own source line of the raise, as a traceback quotes it without the message
    ('    raise ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}")\n', "nproc-per-node-invalid"),
    # the same function's other refusal: --nproc_per_node gpu on a machine without CUDA
    ("ValueError: Cuda is not available.\n", "nproc-per-node-invalid"),
    # torch/distributed/run.py parse_min_max_nnodes: another launcher argument's refusal
    ('RuntimeError: nnodes=2:x is not in "MIN:MAX" format\n', "nproc-per-node-invalid"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_missing_script_keeps_its_own_answer():
    found = explain.explain("python3: can't open file '/home/user/train.py': [Errno 2] No such file or directory\n")
    assert found.signature == "script-not-found"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

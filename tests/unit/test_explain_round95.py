"""Round 95's rules (issue 45), from distributed training in vision codebases (OpenMMLab's tools/dist_train.sh and
slurm_train.sh, detectron2's launch, and the repositories built on them): a launch script of bash run by sh (dash's
`NAME: LINE: Bad substitution` at bash's ${@:3}, read as the script needing bash), and the launcher module run by a
python that has no PyTorch at all (CPython's runpy's words for `python -m torch.distributed.launch`: Python 2's
`PYTHON: No module named torch.distributed`, Python 3's `Error while finding module specification for
'torch.distributed.launch' (ModuleNotFoundError: No module named 'torch')`, read as another interpreter than the
environment's: sudo, an environment not activated). A second wording of each, in another version's or caller's words
than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("bash-script-under-sh", "launcher-python-without-torch")


@pytest.mark.parametrize("text,expected", [
    # older dash releases name the script twice ("NAME: LINE: NAME: "), as Ubuntu 16.04's printed it
    ("./tools/dist_train.sh: 10: ./tools/dist_train.sh: Bad substitution\n", "bash-script-under-sh"),
    # OpenMMLab's slurm_train.sh passes its extra arguments as ${@:5}: the same error from the other launch script
    ("$ GPUS=16 sh tools/slurm_train.sh dev mask_rcnn configs/mask_rcnn/mask-rcnn_r50_fpn_1x_coco.py\n"
     "tools/slurm_train.sh: 16: Bad substitution\n", "bash-script-under-sh"),
    # Python 3.6+'s runpy (_get_module_details) for torchrun's module in a python without torch
    ("/usr/bin/python3: Error while finding module specification for 'torch.distributed.run' "
     "(ModuleNotFoundError: No module named 'torch')\n", "launcher-python-without-torch"),
    # Python 3.4's runpy: "Error while finding spec for {!r} ({}: {})" with the exception's class
    ("/usr/bin/python3.4: Error while finding spec for 'torch.distributed.launch' (<class 'ImportError'>: No module "
     "named 'torch')\n", "launcher-python-without-torch"),
    # Python 2.7 under its versioned name (sys.executable as the interpreter was started)
    ("+ /usr/bin/python2.7 -m torch.distributed.launch --nproc_per_node=8 --master_port=29500 tools/train.py "
     "configs/retinanet_r50_fpn_1x.py --launcher pytorch\n/usr/bin/python2.7: No module named torch.distributed\n",
     "launcher-python-without-torch"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # bash's own error for a wrong ${...} in a script bash runs (subst.c: "%s: bad substitution", after "line N:"),
    # and zsh's: a mistake in the script, not the wrong shell
    ("./train.sh: line 12: ${CUDA_VISIBLE_DEVICES.split}: bad substitution\n", "bash-script-under-sh"),
    ("zsh: bad substitution\n", "bash-script-under-sh"),
    ("train.sh:5: bad substitution\n", "bash-script-under-sh"),
    # torch present without the module: torch.distributed.run arrived in torch 1.9 (an older torch, not no torch)
    ("/usr/bin/python3: No module named torch.distributed.run\n", "launcher-python-without-torch"),
    # another package run with -m in a python without it (module-not-found's), and a torch without the elastic agent
    ("/usr/bin/python3: Error while finding module specification for 'trainer.main' (ModuleNotFoundError: No module "
     "named 'trainer')\n", "launcher-python-without-torch"),
    ("ModuleNotFoundError: No module named 'torch.distributed.elastic'\n", "launcher-python-without-torch"),
    # a Python 3 script importing torch in an environment without it: the traceback's own words
    ('Traceback (most recent call last):\n  File "tools/train.py", line 7, in <module>\n    import torch\n'
     "ModuleNotFoundError: No module named 'torch'\n", "launcher-python-without-torch"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_evidence_is_the_shells_or_pythons_line():
    from dscluster import explain
    found = explain.explain("if you meet following error,\ntools/dist_train.sh: 8: Bad substitution\n")
    assert found.evidence == "tools/dist_train.sh: 8: Bad substitution"
    found = explain.explain("but i get this :\n/usr/bin/python: No module named torch.distributed\n")
    assert found.evidence == "/usr/bin/python: No module named torch.distributed"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

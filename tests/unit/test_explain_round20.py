"""Round 20's rules (issue 45): ssh given Open MPI's `-H HOST:N` as a host name by an Open MPI too old to read the slot
count (mpi-host-slots, signatures.py), a notebook launcher refusing to fork GPU workers from a kernel that already
initialized CUDA (notebook-cuda-initialized, sigtraining.py), a spawned process unable to unpickle what an interactive
__main__ defined (notebook-spawn-main, sigtraining.py): a second wording of each, in another version's or another
caller's words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain


@pytest.mark.parametrize("text,expected", [
    # torchpack's dist-run (mpirun -H localhost:N), another resolver's words (the case was horovodrun's localhost:4)
    ("ssh: Could not resolve hostname localhost:1: Temporary failure in name resolution\n", "mpi-host-slots"),
    # horovodrun on two named hosts, Open MPI's daemon error after ssh's (ORTE's own words also fit mpi-daemons)
    ("ssh: Could not resolve hostname node-a.cluster:4: Name or service not known\n"
     "--------------------------------------------------------------------------\n"
     "ORTE was unable to reliably start one or more daemons.\n"
     "This usually is caused by:\n", "mpi-host-slots"),
    # Lightning's ddp_notebook / ddp_fork check (lightning_fabric), not accelerate's
    ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call "
     "`torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way? "
     "Please remove any such calls, or change the selected strategy. You will have to restart the Python kernel.\n",
     "notebook-cuda-initialized"),
    # accelerate's later releases: the children's cuda-fork error, then the launcher's own RuntimeError raised from it
    ("torch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 0 terminated with the following error:\n"
     "Traceback (most recent call last):\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 288, in _lazy_init\n"
     "    raise RuntimeError(\n"
     "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
     "'spawn' start method\n\n"
     "The above exception was the direct cause of the following exception:\n\n"
     "RuntimeError: CUDA has been initialized before the `notebook_launcher` could create a forked subprocess. Check "
     "training loop wrapper function to make sure there is not a rogue import\n", "notebook-cuda-initialized"),
    # a multiprocessing Pool in a notebook, a function this time (the case was DDP spawning a LightningModule class)
    ("Process SpawnPoolWorker-1:\nTraceback (most recent call last):\n"
     "  File \"/usr/lib/python3.12/multiprocessing/queues.py\", line 389, in get\n"
     "    return _ForkingPickler.loads(res)\n"
     "AttributeError: Can't get attribute 'square' on <module '__main__' (built-in)>\n", "notebook-spawn-main"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # a plain name that does not resolve: no slot count in it
    ("ssh: Could not resolve hostname node0: Name or service not known\n", "mpi-host-slots"),
    # an IPv6 literal is colons, not a name and a count
    ("ssh: Could not resolve hostname fe80::1%eth9: Name or service not known\n", "mpi-host-slots"),
    # accelerate's other notebook check: an Accelerator made in a cell, not CUDA
    ("ValueError: To launch a multi-GPU training from your notebook, the `Accelerator` should only be initialized "
     "inside your training function. Restart your notebook and make sure no cells initializes an `Accelerator`.\n",
     "notebook-cuda-initialized"),
    # a DataLoader worker forked by a script that used CUDA first: torch's own words, no notebook launcher
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method\n", "notebook-cuda-initialized"),
    # a whole model pickled by one script and loaded by another: the class lived in that script's __main__
    ("AttributeError: Can't get attribute 'Net' on <module '__main__' from '/srv/app/infer.py'>\n",
     "notebook-spawn-main"),
    # a checkpoint pickled with an older version of the code: the class moved out of its module
    ("AttributeError: Can't get attribute 'DetectionModel' on <module 'models.yolo' from '/w/yolov5/models/yolo.py'>\n",
     "notebook-spawn-main"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_old_ssh_answer_still_reads_a_plain_name_and_the_new_texts_are_translated():
    assert sig("ssh: Could not resolve hostname node0: Name or service not known\n") == "ssh-unreachable"
    assert sig("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
               "must use the 'spawn' start method\n") == "cuda-fork"
    zh = FAILURES_ZH
    for name in ("mpi-host-slots", "notebook-cuda-initialized", "notebook-spawn-main"):
        s = next(s for s in explain.SIGNATURES if s.name == name)
        assert s.cause in zh and s.fix in zh and s.retry is False, name
    host = explain.explain("ssh: Could not resolve hostname localhost:4: Name or service not known\n")
    assert "Open MPI" in host.cause and "2.0" in host.fix and "slots=N" in host.fix

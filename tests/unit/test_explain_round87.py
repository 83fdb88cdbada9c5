"""Round 87's rules (issue 45), from PyTorch Lightning's multi-GPU threads: Python's pickle refusing an object that a
process started with spawn is sent (Lightning's ddp_spawn, the default for several GPUs before 2.0, and
torch.multiprocessing.spawn), read only where the log shows the spawn start or several GPUs next to the refusal; and
Lightning's strategy check given a Strategy object of the other Lightning package (pytorch_lightning beside
lightning.pytorch). A second wording of each, in another version's or caller's words than the corpus cases they were
written from, and near misses that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("spawn-unpicklable", "lightning-strategy-namespace")

# CPython 3.10's copy.py frames (deepcopy -> _reconstruct -> reductor(4)), which end in the same TypeError as pickle's
_DEEPCOPY = ('  File "/usr/lib/python3.10/copy.py", line 172, in deepcopy\n'
             "    y = _reconstruct(x, memo, *rv)\n"
             '  File "/usr/lib/python3.10/copy.py", line 161, in deepcopy\n'
             "    rv = reductor(4)\n")


@pytest.mark.parametrize("text,expected", [
    # Lightning-AI/pytorch-lightning#1628 (0.7.5rc1, DDP on several GPUs, another object than the corpus's): the spawn
    # start's frames, then pickle's PicklingError
    ('  File "/home/vladimir/anaconda3/envs/solaris/lib/python3.7/multiprocessing/popen_fork.py", line 20, in __init__\n'
     "    self._launch(process_obj)\n"
     '  File "/home/vladimir/anaconda3/envs/solaris/lib/python3.7/multiprocessing/popen_spawn_posix.py", line 47, in '
     "_launch\n"
     "    reduction.dump(process_obj, fp)\n"
     '  File "/home/vladimir/anaconda3/envs/solaris/lib/python3.7/multiprocessing/reduction.py", line 60, in dump\n'
     "    ForkingPickler(file, protocol).dump(obj)\n"
     "_pickle.PicklingError: Can't pickle <class 'torch._C._VariableFunctions'>: it's not the same object as "
     "torch._C._VariableFunctions\n", "spawn-unpicklable"),
    # Lightning 2.x's ddp_spawn launcher (strategies/launchers/multiprocessing.py, launch: mp.start_processes) and
    # Python 3.10's spawn start, composed from their frames, ending in typeobject.c's TypeError for a generator
    ('  File "/usr/local/lib/python3.10/dist-packages/lightning/pytorch/strategies/launchers/multiprocessing.py", '
     "line 136, in launch\n"
     "    process_context = mp.start_processes(\n"
     '  File "/usr/local/lib/python3.10/dist-packages/torch/multiprocessing/spawn.py", line 230, in start_processes\n'
     "    process.start()\n"
     '  File "/usr/lib/python3.10/multiprocessing/popen_spawn_posix.py", line 47, in _launch\n'
     "    reduction.dump(process_obj, fp)\n"
     '  File "/usr/lib/python3.10/multiprocessing/reduction.py", line 60, in dump\n'
     "    ForkingPickler(file, protocol).dump(obj)\n"
     "TypeError: cannot pickle 'generator' object\n", "spawn-unpicklable"),
    # Python 3.7's typeobject.c wording ("can't pickle %.200s objects", before 3.8's "cannot pickle '%.200s' object")
    # under torch.multiprocessing.spawn's own frames
    ('  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 149, in start_processes\n'
     "    process.start()\n"
     '  File "/opt/conda/lib/python3.7/multiprocessing/reduction.py", line 60, in dump\n'
     "    ForkingPickler(file, protocol).dump(obj)\n"
     "TypeError: can't pickle _thread.RLock objects\n", "spawn-unpicklable"),
    # ray-project/ray#47089 (Ray 2.34, pytorch-lightning 2.x): the other direction, Ray's strategy from lightning.pytorch
    # given to pytorch_lightning's Trainer
    ("ValueError: You selected an invalid strategy name: `strategy=<ray.train.lightning._lightning_utils.RayDDPStrategy "
     "object at 0x783283c3b590>`. It must be either a string or an instance of `pytorch_lightning.strategies.Strategy`. "
     "Example choices: auto, ddp, ddp_spawn, deepspeed, ... Find a complete list of options in our documentation at "
     "https://lightning.ai\n", "lightning-strategy-namespace"),
    # Fabric's connector.py wording (lightning.fabric.strategies.Strategy, "dp" among its choices), composed from its
    # f-string with a lightning_fabric strategy
    ("ValueError: You selected an invalid strategy name: `strategy=<lightning_fabric.strategies.fsdp.FSDPStrategy object "
     "at 0x7f1c5e2b9a50>`. It must be either a string or an instance of `lightning.fabric.strategies.Strategy`. Example "
     "choices: auto, ddp, ddp_spawn, deepspeed, dp, ... Find a complete list of options in our documentation at "
     "https://lightning.ai\n", "lightning-strategy-namespace"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # copy.deepcopy of a module holding a lock, in a DDP run (Lightning's strategies/ddp.py frame just before): the same
    # TypeError as pickle's, no process started
    ('  File "/usr/local/lib/python3.10/dist-packages/lightning/pytorch/strategies/ddp.py", line 190, in setup\n'
     + _DEEPCOPY + "TypeError: cannot pickle '_thread.lock' object\n", "spawn-unpicklable"),
    # torch.save of a model holding a lambda, on a run of several GPUs (torch/serialization.py's _save frames)
    ("Training on 4 GPUs\n"
     '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 653, in _save\n'
     "    pickler.dump(obj)\n"
     "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n", "spawn-unpicklable"),
    # torch.distributed's all_gather_object pickling each rank's object (distributed_c10d.py's _object_to_tensor)
    ("[rank1]: DDP run, gathering metrics\n"
     '[rank1]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2443, in '
     "all_gather_object\n"
     "[rank1]:     input_tensor, local_size = _object_to_tensor(obj, current_device, group)\n"
     "[rank1]: TypeError: cannot pickle '_thread.RLock' object\n", "spawn-unpicklable"),
    # the refusal alone, with nothing that shows a spawn start (copy.deepcopy says the same; the corpus's
    # lightning-14198 stays generic for this reason)
    ("ValueError: ctypes objects containing pointers cannot be pickled\n", "spawn-unpicklable"),
    ("TypeError: cannot pickle '_thread.lock' object\n", "spawn-unpicklable"),
    # Lightning's check given a name, or None (MeteoSwiss/ldcast#20, Lightning 2.x): not an object of the other package
    ("ValueError:\nYou selected an invalid strategy name: `strategy=None`. It must be either a string or an instance of "
     "`pytorch_lightning.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, deepspeed, ... Find a complete "
     "list of options in our documentation at https://lightning.ai\n", "lightning-strategy-namespace"),
    # a Strategy class passed where an instance belongs (the f-string's repr of a class): not the other package
    ("ValueError: You selected an invalid strategy name: `strategy=<class "
     "'lightning.pytorch.strategies.ddp.DDPStrategy'>`. It must be either a string or an instance of "
     "`lightning.pytorch.strategies.Strategy`.\n", "lightning-strategy-namespace"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_unpickling_side_stays_the_notebooks():
    # a spawned child unable to unpickle what an interactive __main__ defined, under ddp_spawn: round 20's family
    assert sig("Setting `accelerator=\"ddp_spawn\"` for you.\n"
               "AttributeError: Can't get attribute 'LitModel' on <module '__main__' (built-in)>\n") == \
        "notebook-spawn-main"


def test_a_strategy_name_stays_the_registrys():
    assert sig("ValueError: You selected an invalid strategy name: `strategy='ddp_sharded'`. It must be either a "
               "string or an instance of `lightning.pytorch.strategies.Strategy`.\n") == "lightning-strategy-name"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)

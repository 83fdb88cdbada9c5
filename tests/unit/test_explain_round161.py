"""Round 161's rules (issue 45, live: a user's script's data, files, environment and resources under dscluster launch
--local 2): an environment variable the script reads with os.environ[...] that the ranks do not have (CPython's
os._Environ.__getitem__ frame before the KeyError), PyTorch's CPU allocator refusing one allocation
(c10/core/impl/alloc_cpu.cpp's DefaultCPUAllocator words), a DataLoader's workers started by spawn given what pickle
refuses (torch/utils/data/dataloader.py's `w.start()` frame before CPython's pickle words), a checkpoint file cut short
as torch 2.x's zip reader meets it (serialization.py's PyTorchFileReader frame before EINVAL or a negative seek), and
DeepSpeed's save_checkpoint finding its save_dir taken by something not a directory (engine.py's rank-0 makedirs);
second wordings (other versions' and callers' words than the live logs they were written from) and near misses,
other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("env-var-unset", "host-alloc-refused", "dataloader-unpicklable", "ds-save-dir-not-directory")


def test_new_families_are_translated_and_final():
    translated_and_final((*NEW, "ckpt-corrupt"))


@pytest.mark.parametrize("text", [
    # Python 3.8's os.py frame with its raise line
    ('Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n'
     '    wandb_key = os.environ["WANDB_API_KEY"]\n'
     '  File "/usr/lib/python3.8/os.py", line 675, in __getitem__\n    raise KeyError(key) from None\n'
     "KeyError: 'WANDB_API_KEY'\n"),
    # os.environ.pop through collections.abc's MutableMapping.pop, a conda python 3.10, rank-prefixed
    ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/work/run.py\", line 8, in <module>\n"
     "[rank1]:     token = os.environ.pop(\"HF_TOKEN\")\n"
     "[rank1]:   File \"/opt/conda/lib/python3.10/_collections_abc.py\", line 957, in pop\n"
     "[rank1]:     value = self[key]\n"
     "[rank1]:   File \"/opt/conda/lib/python3.10/os.py\", line 680, in __getitem__\n"
     "[rank1]:     raise KeyError(key) from None\n[rank1]: KeyError: 'HF_TOKEN'\n"),
])
def test_env_var_unset(text):
    assert sig(text) == "env-var-unset"


@pytest.mark.parametrize("text", [
    # a launcher's own variable: the script was not started by a launcher (not-launched)
    ('  File "train.py", line 20, in <module>\n    local_rank = int(os.environ["LOCAL_RANK"])\n'
     '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n    raise KeyError(key) from None\n'
     "KeyError: 'LOCAL_RANK'\n"),
    # a scheduler's variable: a script for Slurm run outside a Slurm job (slurm-env-missing; the corpus's pixelsplat#112)
    ('  File "/home/u/pixelsplat/src/main.py", line 40, in train\n    node_id = int(os.environ["SLURM_NODEID"])\n'
     '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n    raise KeyError(key) from None\n'
     "KeyError: 'SLURM_NODEID'\n"),
    # a dict's KeyError: the script's own config, no os frame
    ('Traceback (most recent call last):\n  File "train.py", line 30, in main\n    lr = config["learning_rate"]\n'
     "KeyError: 'learning_rate'\n"),
    # another __getitem__: a datasets column that is not there
    ('  File "/opt/conda/lib/python3.10/site-packages/datasets/arrow_dataset.py", line 2800, in __getitem__\n'
     "    return self._getitem(key)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/datasets/formatting/formatting.py", line 581, in _check_valid_column_key\n'
     "    raise KeyError(f\"Column {key} not in the dataset. Current columns in the dataset: {self._data.column_names}\")\n"
     "KeyError: \"Column labels not in the dataset. Current columns in the dataset: ['text']\"\n"),
])
def test_near_misses_are_not_env_var_unset(text):
    assert sig(text) != "env-var-unset"


@pytest.mark.parametrize("text", [
    # torch 1.x's CPUAllocator.cpp enforce (nguyenvanhoang7398/FANG#1)
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to "
     "allocate 1178729664 bytes. Error code 12 (Cannot allocate memory)\n"),
    # torch 2.x's alloc_cpu.cpp, with the failed condition (mxfold/mxfold2#20)
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 132426121216 bytes. Error code 12 (Cannot allocate memory)\n"),
    # Windows' _aligned_malloc (MaximeVandegar/Papers-in-100-Lines-of-Code#10)
    ("RuntimeError: [enforce fail at C:\\b\\abs_bao0hdcrdh\\croot\\pytorch_1675190257512\\work\\c10\\core\\impl\\"
     "alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1981808640 bytes.\n"),
    # before pytorch#20618 (2019)
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0\n"),
])
def test_host_alloc_refused(text):
    assert sig(text) == "host-alloc-refused"


@pytest.mark.parametrize("text", [
    # a GPU allocation
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 "
     "GiB of which 4.06 MiB is free.\n"),
    # a DataLoader worker's fork refused by the kernel (host-memory's)
    ('  File "/usr/lib/python3.10/multiprocessing/popen_fork.py", line 66, in _launch\n'
     "    self.pid = os.fork()\nOSError: [Errno 12] Cannot allocate memory\n"),
    # another enforce of torch's: a checkpoint's record missing (pytorch/pytorch#57805)
    ("RuntimeError: [enforce fail at inline_container.cc:222] . file not found: archive/data/94308821128336\n"),
])
def test_near_misses_are_not_host_alloc_refused(text):
    assert sig(text) != "host-alloc-refused"


_SPAWN_TAIL = (
    '  File "C:\\Python310\\lib\\multiprocessing\\process.py", line 121, in start\n'
    "    self._popen = self._Popen(self)\n"
    '  File "C:\\Python310\\lib\\multiprocessing\\context.py", line 327, in _Popen\n'
    "    return Popen(process_obj)\n"
    '  File "C:\\Python310\\lib\\multiprocessing\\popen_spawn_win32.py", line 93, in __init__\n'
    "    reduction.dump(process_obj, to_child)\n"
    '  File "C:\\Python310\\lib\\multiprocessing\\reduction.py", line 60, in dump\n'
    "    ForkingPickler(file, protocol).dump(obj)\n")


@pytest.mark.parametrize("text", [
    # Windows' spawn and a lambda collate_fn, torch 1.13's line numbers
    ('  File "C:\\Python310\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 1042, in __init__\n'
     "    w.start()\n" + _SPAWN_TAIL +
     "_pickle.PicklingError: Can't pickle <function <lambda> at 0x000001F2A3B4C5D0>: attribute lookup <lambda> on "
     "__main__ failed\n"),
    # macOS's spawn and a dataset holding an lmdb environment
    ('  File "/Users/u/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1091, in __init__\n'
     "    w.start()\n"
     '  File "/opt/homebrew/Cellar/python@3.11/3.11.6/lib/python3.11/multiprocessing/popen_spawn_posix.py", line 47, '
     "in _launch\n    reduction.dump(process_obj, fp)\n"
     '  File "/opt/homebrew/Cellar/python@3.11/3.11.6/lib/python3.11/multiprocessing/reduction.py", line 60, in dump\n'
     "    ForkingPickler(file, protocol).dump(obj)\nTypeError: cannot pickle 'Environment' object\n"),
    # torch's own warning where the traceback was cut off (the Python 3.14 forkserver default named in it)
    ("/usr/lib/python3.14/site-packages/torch/utils/data/dataloader.py:438: UserWarning: Got pickle error when "
     "attempting to start a worker Process. This might be because the worker Process arguments are not picklable. "
     "Python 3.14+ changed the multiprocessing start method in non-Mac POSIX platforms to 'forkserver', which "
     "requires the worker Process arguments to be picklable. You can also try "
     "multiprocessing.set_start_method('fork').\n"),
])
def test_dataloader_unpicklable(text):
    assert sig(text) == "dataloader-unpicklable"


@pytest.mark.parametrize("text", [
    # torch.multiprocessing.spawn given a local class: the training processes, not a DataLoader (spawn-unpicklable)
    ('  File "train.py", line 50, in <module>\n    mp.spawn(main_worker, nprocs=2, args=(cfg,))\n'
     '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 281, in spawn\n'
     "    return start_processes(fn, args, nprocs, join, daemon, start_method=\"spawn\")\n" + _SPAWN_TAIL +
     "AttributeError: Can't pickle local object 'main.<locals>.Worker'\n"),
    # torch.save of a scheduler with a local lambda
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 652, in _save\n'
     "    pickler.dump(obj)\nAttributeError: Can't pickle local object 'get_scheduler.<locals>.lr_lambda'\n"),
    # a worker killed, not a pickling refusal
    ("RuntimeError: DataLoader worker (pid 1234) is killed by signal: Killed.\n"),
])
def test_near_misses_are_not_dataloader_unpicklable(text):
    assert sig(text) != "dataloader-unpicklable"


@pytest.mark.parametrize("text", [
    # a file object cut short: Python's seek refuses the negative offset
    ('  File "/opt/conda/lib/python3.11/site-packages/torch/serialization.py", line 807, in __init__\n'
     "    super().__init__(torch._C.PyTorchFileReader(name_or_buffer))\n"
     "                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nValueError: negative seek value -2316\n"),
    # torch 2.1's line, a path
    ('  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 480, in __init__\n'
     "    super().__init__(torch._C.PyTorchFileReader(name_or_buffer))\nOSError: [Errno 22] Invalid argument\n"),
])
def test_truncated_checkpoint_is_ckpt_corrupt(text):
    assert sig(text) == "ckpt-corrupt"


@pytest.mark.parametrize("text", [
    # Windows' open() of a name with colons, at torch.save (nshaud/DeepHyperX#16)
    ('  File "C:\\Users\\u\\Anaconda3\\lib\\site-packages\\torch\\serialization.py", line 183, in _with_file_like\n'
     "    f = open(f, mode)\nOSError: [Errno 22] Invalid argument: './checkpoints/2020-07-03 10:52:46.094626_epoch2.pth'\n"),
    # the legacy format's storage read (xingyizhou/CenterNet#613)
    ('  File "D:\\Anconda3\\envs\\pytorch\\lib\\site-packages\\torch\\serialization.py", line 580, in _load\n'
     "    deserialized_objects[key]._set_from_file(f, offset, f_should_read_directly)\n"
     "OSError: [Errno 22] Invalid argument\n"),
])
def test_near_misses_are_not_ckpt_corrupt(text):
    assert sig(text) != "ckpt-corrupt"


@pytest.mark.parametrize("text", [
    # DeepSpeed before its checkpoint engine: os.makedirs in save_checkpoint
    ('  File "/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/engine.py", line 3073, in save_checkpoint\n'
     "    os.makedirs(save_dir, exist_ok=True)\n"
     '  File "/opt/conda/lib/python3.8/os.py", line 223, in makedirs\n    mkdir(name, mode)\n'
     "FileExistsError: [Errno 17] File exists: '/ckpt/run1'\n"),
    # a file among save_dir's parents
    ("[rank0]:   File \"/usr/lib/python3/dist-packages/deepspeed/runtime/engine.py\", line 3605, in save_checkpoint\n"
     "[rank0]:     self.checkpoint_engine.makedirs(save_dir, exist_ok=True)\n"
     "[rank0]:   File \"/usr/lib/python3/dist-packages/deepspeed/runtime/checkpoint_engine/checkpoint_engine.py\", "
     "line 25, in makedirs\n[rank0]:     os.makedirs(path, exist_ok=exist_ok)\n"
     "[rank0]:   File \"<frozen os>\", line 225, in makedirs\n"
     "[rank0]: NotADirectoryError: [Errno 20] Not a directory: 'output/ckpt'\n"),
])
def test_ds_save_dir_not_directory(text):
    assert sig(text) == "ds-save-dir-not-directory"


@pytest.mark.parametrize("text", [
    # another framework's makedirs on a shared file system (the race: ckpt-dir-exists-race)
    ('  File "/opt/venv/lib/python3.12/site-packages/nemo_automodel/components/checkpoint/checkpointing.py", line 180, '
     "in save_model\n    os.makedirs(model_state_dir, exist_ok=True)\n"
     '  File "<frozen os>", line 225, in makedirs\n'
     "FileExistsError: [Errno 17] File exists: '/ckpt/epoch_0_step_100/model'\n"),
    # DeepSpeed's save_checkpoint failing on a full disk, after the directory was made
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 3200, in save_checkpoint\n'
     "    self._save_checkpoint(save_dir, tag, client_state=client_state)\n"
     "OSError: [Errno 28] No space left on device\n"),
])
def test_near_misses_are_not_ds_save_dir_not_directory(text):
    assert sig(text) != "ds-save-dir-not-directory"

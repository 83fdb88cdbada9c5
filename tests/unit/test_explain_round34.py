"""Round 34's rules (issue 45), from threads of checkpoints and caches on shared and network file systems
(sigstorage.py): ranks that rename or delete the same checkpoint at once, a file deleted on NFS while still open, a
file system without the file locks a writer takes: a second wording of each, in another version's or another caller's
words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigstorage import STORAGE_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # transformers 4.49's Trainer (os.renames), the destination already made by another rank
    ("[rank3]:     os.renames(output_dir, checkpoint_dir)\n"
     "[rank3]: OSError: [Errno 39] Directory not empty: '/root/out/v5/tmp-checkpoint-djiermq4' -> "
     "'/root/out/v5/checkpoint-100'\n", "ckpt-save-race"),
    # timm's checkpoint_saver (os.replace of its temporary file), a later release than the corpus case's train.py
    ('  File "/app/timm/utils/checkpoint_saver.py", line 73, in _replace\n    os.replace(src, dst)\n'
     "FileNotFoundError: [Errno 2] No such file or directory: './output/train/run1/tmp.pth.tar' -> "
     "'./output/train/run1/last.pth.tar'\n", "ckpt-save-race"),
    # the Trainer's rotation deleting a staging checkpoint another rank still writes into (transformers 4.38)
    ("    shutil.rmtree(staging_output_dir)\n"
     "OSError: [Errno 39] Directory not empty: 'saves/qwen/tmp-checkpoint-1000/global_step1000'\n", "ckpt-save-race"),
    # every rank removing the output directory: an entry gone between rmtree's listing and its unlink
    ("Traceback (most recent call last):\n"
     '  File "/opt/conda/lib/python3.11/shutil.py", line 759, in rmtree\n    _rmtree_safe_fd(fd, path, onerror)\n'
     '  File "/opt/conda/lib/python3.11/shutil.py", line 703, in _rmtree_safe_fd\n'
     "    onerror(os.unlink, fullname, sys.exc_info())\n"
     '  File "/opt/conda/lib/python3.11/shutil.py", line 701, in _rmtree_safe_fd\n'
     "    os.unlink(entry.name, dir_fd=topfd)\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'optimizer.pt'\n", "ckpt-save-race"),
    # the shell's rm on a directory whose file is still open on NFS
    ("rm: cannot remove 'runs/exp4/.nfs00000000034be6e100000a1c': Device or resource busy\n", "nfs-open-file"),
    # Python's filelock on a Lustre mount without flock
    ("Traceback (most recent call last):\n"
     '  File "/opt/conda/lib/python3.10/site-packages/filelock/_unix.py", line 44, in _acquire\n'
     "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nOSError: [Errno 38] Function not implemented\n",
     "fs-lock-unsupported"),
    # NFS without its lock service: HDF5's words with ENOLCK
    ("OSError: Unable to open file (unable to lock file, errno = 37, error message = 'No locks available')\n",
     "fs-lock-unsupported"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # a rename whose source is not a temporary name: a file the script expected
    ("FileNotFoundError: [Errno 2] No such file or directory: 'out/model.bin' -> 'out/final/model.bin'\n",
     "ckpt-save-race"),
    # a temporary file renamed to something that is not a checkpoint
    ("FileNotFoundError: [Errno 2] No such file or directory: 'runs/tmp_results.json' -> 'runs/results.json'\n",
     "ckpt-save-race"),
    # a directory that is not a checkpoint, removed while not empty
    ("OSError: [Errno 39] Directory not empty: 'build/lib.linux-x86_64-cpython-310'\n", "ckpt-save-race"),
    # one process removing a path that is not there (rmtree's first lstat, no rank prefix): a wrong path, not a race
    ("Traceback (most recent call last):\n"
     '  File "/usr/lib/python3.10/shutil.py", line 715, in rmtree\n    orig_st = os.lstat(path)\n'
     "FileNotFoundError: [Errno 2] No such file or directory: 'ckpts/run3'\n", "ckpt-save-race"),
    # a busy device that is no NFS file
    ("OSError: [Errno 16] Device or resource busy: '/dev/nvidia0'\n", "nfs-open-file"),
    # a lock held by another process: the lock works, it is taken
    ("    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nBlockingIOError: [Errno 11] Resource temporarily "
     "unavailable\n", "fs-lock-unsupported"),
    # ENOSYS from something that is no lock
    ("OSError: [Errno 38] Function not implemented: 'io_uring_setup'\n", "fs-lock-unsupported"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    # a file the script needs and does not find is still a missing file
    assert sig("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n") == "file-missing"
    assert sig("OSError: [Errno 30] Read-only file system: '/nonexistent'\n") == "read-only-fs"
    zh = FAILURES_ZH
    for s in STORAGE_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
        assert s.name in {x.name for x in explain.SIGNATURES}
